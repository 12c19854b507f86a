# ONNX backend conformance suite: every test folder of the ONNX test data
# (node, pytorch-converted, pytorch-operator, simple) through `orchid check`
# in three modes: --interpreter (the reference interpreter on the imported
# graph, the oracle), --fission (the reference interpreter on the graph after
# fission into primitives) and plain `check` (the compiled program on the CPU
# runtime). Fails if a test of tests/conformance/expected_pass.txt,
# expected_pass_fission.txt or expected_pass_runtime.txt no longer passes in
# its mode; writes docs/conformance.md (pass / fail / unsupported / error per
# test and per operator, plus the pass-with-fission and pass-on-runtime
# columns) in the source tree. Skipped (exit 77) where the test data
# (Debian's libonnx-testdata) is not installed. To regenerate the gate lists,
# see the command at the top of run_conformance.py.
#
# The runner needs the `onnx` Python package to list each model's operators:
# Debian's python3-onnx under /usr/bin/python3 by default; override with
# -DORCHID_CONFORMANCE_PYTHON=/path/to/python.

find_program(ORCHID_CONFORMANCE_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "Python 3 with the onnx package, for the conformance suite")
if(NOT ORCHID_CONFORMANCE_PYTHON)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    set(ORCHID_CONFORMANCE_PYTHON ${Python3_EXECUTABLE} CACHE FILEPATH
        "Python 3 with the onnx package, for the conformance suite" FORCE)
  endif()
endif()
set(ORCHID_CONFORMANCE_DATA /usr/share/libonnx-testdata/data CACHE PATH
    "ONNX backend test data (node/, pytorch-converted/, ...)")

if(ORCHID_CONFORMANCE_PYTHON)
  add_test(NAME conformance
    COMMAND ${ORCHID_CONFORMANCE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/run_conformance.py
      --orchid $<TARGET_FILE:orchid>
      --data-dir ${ORCHID_CONFORMANCE_DATA}
      --check-expected
      --with-fission
      --with-runtime
      --with-fused
      --report ${PROJECT_SOURCE_DIR}/docs/conformance.md
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # Uses every core (--jobs defaults to nproc; the runtime mode runs each test
  # with --threads 1). The three modes took 104 s on 2 (shared) cores, most of
  # it compiling one test (pytorch-converted/test_MaxPool2d_stride_padding_dilation:
  # a 60x80 dilated MaxPool fissions into 9600 kernels, ~80 s); the timeout
  # leaves room for slow reference kernels and sanitizer builds.
  set_tests_properties(conformance PROPERTIES
    TIMEOUT 1800
    RUN_SERIAL TRUE
    SKIP_RETURN_CODE 77
    LABELS conformance)
else()
  message(STATUS "conformance suite disabled: no python3 found")
endif()
