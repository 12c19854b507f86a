# bench/run end to end on one small zoo model (tests/bench/bench_harness_test.py):
# the export, the three compiles, the output checks against ONNX Runtime, the
# interleaved timing and the roofline columns all run and agree with each
# other. It asserts correctness and the report's shape, never speed.
# Needs the repo's .venv (scripts/setup), like the model tests.
orchid_python_test(NAME bench_harness NEEDS "onnx onnxruntime numpy torch"
                   COMMAND ${CMAKE_CURRENT_LIST_DIR}/bench_harness_test.py
                           $<TARGET_FILE:orchid> ${CMAKE_BINARY_DIR}/tests/bench)
set_tests_properties(bench_harness PROPERTIES LABELS bench TIMEOUT 900)
