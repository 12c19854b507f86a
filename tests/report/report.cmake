# The plan report in a real browser: `orchid report` on the tiny CNN, then
# Debian's chromium, headless, loads the page (no network) and
# browser_check.py fails unless it rendered the plan without console errors.
# The screenshot stays in the build tree: ${build}/tests/report/tiny_cnn.png.
set(ORCHID_REPORT_TEST_DIR ${CMAKE_BINARY_DIR}/tests/report)
file(MAKE_DIRECTORY ${ORCHID_REPORT_TEST_DIR})
add_test(NAME report_in_browser
         COMMAND sh -c "\"$1\" report \"$2\" -o \"$3/tiny_cnn.html\" --runs 3 --threads 1 && python3 \"$4\" \"$3/tiny_cnn.html\" \"$3/tiny_cnn.png\""
                 report_in_browser $<TARGET_FILE:orchid> ${PROJECT_SOURCE_DIR}/examples/tiny_cnn/model.onnx
                 ${ORCHID_REPORT_TEST_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/report/browser_check.py)
set_tests_properties(report_in_browser PROPERTIES LABELS report)
