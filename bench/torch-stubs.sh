# bench/torch-stubs.sh: the stubs library mode preloads (sourced by
# bench/torch-step.sh and bench/torch-trips.sh): every library PyTorch's CUDA
# build loads, by soname
libstubs="libcuda.so.1 libcudart.so.13 libcublasLt.so.13 libcublas.so.13 libcufft.so.12 libcurand.so.10
  libcusparse.so.12 libcusolver.so.12 libnvrtc.so.13 libnvJitLink.so.13 libcudnn_graph.so.9 libcudnn_ops.so.9
  libcudnn_cnn.so.9 libcudnn_adv.so.9 libcudnn_engines_precompiled.so.9
  libcudnn_engines_runtime_compiled.so.9 libcudnn_heuristic.so.9 libcudnn.so.9"
