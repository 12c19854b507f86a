# ONNX backend conformance suite: every test folder of the ONNX test data
# (node, pytorch-converted, pytorch-operator, simple) through `orchid check`
# in four modes: --interpreter (the reference interpreter on the imported
# graph, the oracle), --fission (the reference interpreter on the graph after
# fission into primitives), --no-fusion and --no-profile (the compiled program on the CPU
# runtime, unfused and fused). Fails if a test of tests/conformance/expected_pass.txt,
# expected_pass_{fission,runtime,fused}.txt no longer passes in
# its mode; writes docs/conformance.md (pass / fail / unsupported / error per
# test and per operator, plus the pass-with-fission and pass-on-runtime
# columns) in the source tree. In the runtime modes it also fails when a listed
# test starts to run a reference kernel (reference_fallback_<mode>.txt lists
# those allowed to). To regenerate the gate lists, see the command at the top
# of run_conformance.py.
#
# The runner needs the `onnx` Python package to list each model's operators:
# the project's .venv has it. Without the test data or the package the test
# fails and says so.
set(ORCHID_CONFORMANCE_DATA /usr/share/libonnx-testdata/data CACHE PATH
    "ONNX backend test data (node/, pytorch-converted/, ...)")

orchid_python_test(NAME conformance NEEDS "onnx"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_conformance.py
    --orchid $<TARGET_FILE:orchid>
    --data-dir ${ORCHID_CONFORMANCE_DATA}
    --check-expected
    --with-fission
    --with-runtime
    --with-fused
    --report ${PROJECT_SOURCE_DIR}/docs/conformance.md)
# Uses every core (--jobs defaults to nproc; the runtime mode runs each test
# with --threads 1). The four modes took about 2 minutes on 2 (shared) cores,
# most of it compiling one test (pytorch-converted/test_MaxPool2d_stride_padding_dilation:
# a 60x80 dilated MaxPool fissions into many kernels); the timeout leaves room
# for slow reference kernels and sanitizer builds.
set_tests_properties(conformance PROPERTIES
  TIMEOUT 1800
  RUN_SERIAL TRUE
  LABELS conformance)
