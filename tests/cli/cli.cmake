# CLI error cases: bad models, tensor files and arguments each give one
# `orchid: error:` message and exit status 2 (tests/cli/cli_errors_test.py).
# Included from tests/CMakeLists.txt. The script builds its bad models with the
# onnx package of the project's .venv.
orchid_python_test(NAME cli_errors NEEDS "onnx numpy"
                   COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_errors_test.py $<TARGET_FILE:orchid>)
set_tests_properties(cli_errors PROPERTIES LABELS cli TIMEOUT 300)
