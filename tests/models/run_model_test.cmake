# Driver of one model test (cmake -P), registered by models.cmake:
#   1. export the PyTorch model into WORK_DIR/<MODEL>/model.onnx unless the
#      file is there already (exports take tens of seconds: a cache);
#   2. write ONNX Runtime's outputs on seeded random inputs (the oracle) into
#      WORK_DIR/<MODEL>/<DATA>/test_data_set_0;
#   3. run `orchid check` on them with the given tolerances: the orchestrated
#      program (fusion, kernels timed into a cache under WORK_DIR).
# Variables: PYTHON SOURCE_DIR ORCHID MODEL WORK_DIR DATA RTOL ATOL, optional
# SHAPE (name=dims, for the test data; orchid binds symbolic dims from it).
cmake_minimum_required(VERSION 3.20)

if(NOT EXISTS "${PYTHON}")
  message(FATAL_ERROR
    "model test ${MODEL}: ${PYTHON} not found. The model tests need the repo's Python "
    "environment (onnxruntime, onnx, numpy, and Debian's torch): run scripts/setup first.")
endif()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "model test ${MODEL}: ${what} failed (exit ${rc})")
  endif()
endfunction()

set(model_dir "${WORK_DIR}/${MODEL}")
set(model_file "${model_dir}/model.onnx")
if(NOT EXISTS "${model_file}")
  run_step("export" "${PYTHON}" "${SOURCE_DIR}/tests/models/export_models.py" "${WORK_DIR}" --only "${MODEL}")
endif()

set(data_dir "${model_dir}/${DATA}")
file(REMOVE_RECURSE "${data_dir}")
set(shape_args)
if(SHAPE)
  set(shape_args --shape "${SHAPE}")
endif()
run_step("test data from onnxruntime"
  "${PYTHON}" "${SOURCE_DIR}/tests/models/make_test_data.py" "${model_file}" "${data_dir}" --seed 0 ${shape_args})

execute_process(
  COMMAND "${ORCHID}" check "${model_file}" --test-dir "${data_dir}" --rtol "${RTOL}" --atol "${ATOL}"
          --cache-dir "${WORK_DIR}/orchid-cache"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "model test ${MODEL}: orchid check exited ${rc} (1: outputs differ from onnxruntime, 2: error)")
endif()
