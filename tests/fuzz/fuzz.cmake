# Differential graph fuzzing (tests/fuzz/graph_fuzz.py): random valid ONNX
# graphs compiled in every mode (--no-fusion, fused with profiling, --derive)
# at 1 and 2 threads, each compared with the reference interpreter. CI runs a
# fixed-seed batch sized to stay within about 3 minutes on 2 cores, and
# replays every reduced finding saved under tests/fuzz/regressions. Included
# from tests/CMakeLists.txt; the libFuzzer target of the importer is
# tests/fuzz/CMakeLists.txt (scripts/fuzz).
orchid_python_test(NAME graph_fuzz NEEDS "onnx numpy"
                   COMMAND ${CMAKE_CURRENT_LIST_DIR}/graph_fuzz.py --orchid $<TARGET_FILE:orchid>
                           --seeds 0:150 --no-reduce)
set_tests_properties(graph_fuzz PROPERTIES LABELS fuzz TIMEOUT 900 RUN_SERIAL TRUE)
orchid_python_test(NAME graph_fuzz_regressions NEEDS "onnx numpy"
                   COMMAND ${CMAKE_CURRENT_LIST_DIR}/graph_fuzz.py --orchid $<TARGET_FILE:orchid>
                           --replay ${CMAKE_CURRENT_LIST_DIR}/regressions)
set_tests_properties(graph_fuzz_regressions PROPERTIES LABELS fuzz TIMEOUT 600)
