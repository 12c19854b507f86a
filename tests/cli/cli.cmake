# CLI error cases: bad models, tensor files and arguments each give one
# `orchid: error:` message and exit status 2 (tests/cli/cli_errors_test.py).
# Included from tests/CMakeLists.txt.
#
# The script builds its bad models with the onnx Python package; the first
# interpreter that can import it (and numpy) runs the test. Debian's
# python3-onnx lives in /usr/bin/python3, which a pyenv shim may hide.
find_program(ORCHID_CLI_PYTHON_SYSTEM NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_package(Python3 COMPONENTS Interpreter QUIET)
set(ORCHID_CLI_PYTHON "")
foreach(candidate ${ORCHID_CLI_PYTHON_SYSTEM} ${Python3_EXECUTABLE})
  if(NOT ORCHID_CLI_PYTHON AND candidate)
    execute_process(COMMAND ${candidate} -c "import onnx, numpy"
                    RESULT_VARIABLE import_status OUTPUT_QUIET ERROR_QUIET)
    if(import_status EQUAL 0)
      set(ORCHID_CLI_PYTHON ${candidate})
    endif()
  endif()
endforeach()

if(ORCHID_CLI_PYTHON)
  add_test(NAME cli_errors
           COMMAND ${ORCHID_CLI_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/cli_errors_test.py $<TARGET_FILE:orchid>)
  set_tests_properties(cli_errors PROPERTIES LABELS cli TIMEOUT 300)
else()
  message(STATUS "cli_errors test skipped: no Python 3 with the onnx and numpy packages")
endif()
