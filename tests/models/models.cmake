# Model tests: PyTorch models exported to ONNX (tests/models/export_models.py),
# run by the reference interpreter through `orchid check` and compared with
# ONNX Runtime's CPU outputs on the same seeded random inputs
# (tests/models/make_test_data.py). Each test is one run of
# run_model_test.cmake; exports are cached in the build tree.
#
# They need the repo's .venv (scripts/setup): without it they fail and say so.
#
# Tolerances: |orchid - ort| <= atol + rtol * |ort| elementwise.
#   rtol 1e-4 is the requirement (both sides compute in float32, only the
#   summation order differs).
#   atol 1e-5: relative error means nothing for outputs near 0 (a logit or a
#   tanh that crosses zero can be 1e-6 with an absolute rounding error of the
#   same size), so near 0 an absolute bound takes over. Its size: the outputs
#   here are O(0.1..10) and come out of float32 dot products thousands of terms
#   long (ResNet-18: K = 3*3*512 = 4608), whose rounding error differs between
#   two correct summation orders by ~sqrt(K) * 2^-24 * |partial sums| ~ 1e-6
#   to a few 1e-6; 1e-5 covers that with margin while still catching any real
#   mistake (a wrong element is off by far more than 1e-5).

set(ORCHID_MODELS_PYTHON ${PROJECT_SOURCE_DIR}/.venv/bin/python)
set(ORCHID_MODELS_DIR ${CMAKE_BINARY_DIR}/tests/models)

# orchid_model_test(TEST_NAME MODEL DATA_DIR_NAME [SHAPE])
function(orchid_model_test test model data)
  add_test(NAME ${test}
    COMMAND ${CMAKE_COMMAND}
      -DPYTHON=${ORCHID_MODELS_PYTHON}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DORCHID=$<TARGET_FILE:orchid>
      -DMODEL=${model}
      -DWORK_DIR=${ORCHID_MODELS_DIR}
      -DDATA=${data}
      -DSHAPE=${ARGN}
      -DRTOL=1e-4
      -DATOL=1e-5
      -P ${CMAKE_CURRENT_LIST_DIR}/run_model_test.cmake)
  # Tests of one model share its exported file: RESOURCE_LOCK keeps a
  # parallel ctest from exporting it twice at once.
  set_tests_properties(${test} PROPERTIES LABELS models TIMEOUT 900 RESOURCE_LOCK model_${model})
endfunction()

orchid_model_test(model_resnet18 resnet18 data)
orchid_model_test(model_transformer_encoder transformer_encoder data)
orchid_model_test(model_dcgan_generator dcgan_generator data)
orchid_model_test(model_mobilenet_v2 mobilenet_v2 data)
orchid_model_test(model_yolo_detector yolo_detector data)
orchid_model_test(model_style_transfer style_transfer data)
# The exports have a symbolic batch axis: bind it to 2 from the test inputs.
orchid_model_test(model_transformer_encoder_batch2 transformer_encoder data_batch2 batch=2)
orchid_model_test(model_dcgan_generator_batch2 dcgan_generator data_batch2 batch=2)
# Its YOLO-style head reshapes by the batch read back with Shape/Gather.
orchid_model_test(model_yolo_detector_batch2 yolo_detector data_batch2 batch=2)

# The shipped example (examples/tiny_cnn): its model and ONNX Runtime outputs
# are committed, so this test needs neither Python nor onnxruntime.
add_test(NAME model_example_tiny_cnn
  COMMAND $<TARGET_FILE:orchid> check ${PROJECT_SOURCE_DIR}/examples/tiny_cnn/model.onnx
          --test-dir ${PROJECT_SOURCE_DIR}/examples/tiny_cnn --rtol 1e-4 --atol 1e-5)
set_tests_properties(model_example_tiny_cnn PROPERTIES LABELS models)
