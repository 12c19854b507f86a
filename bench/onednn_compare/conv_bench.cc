// oneDNN 2.6 vs 3.2 on the zoo's conv shapes (bench/onednn_compare/run builds it against
// both): median time of one primitive execution, src/dst in plain nchw or in the layout oneDNN picks (any).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

struct Shape {
  const char* name;
  int64_t n, c, h, w, oc, k, s, g;
  bool deconv;
};

double time_ms(engine& eng, stream& st, primitive& p, std::unordered_map<int, memory>& args) {
  for (int i = 0; i < 5; ++i) p.execute(st, args);
  st.wait();
  std::vector<double> t;
  for (int i = 0; i < 30; ++i) {
    auto a = std::chrono::steady_clock::now();
    p.execute(st, args);
    st.wait();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A primitive with the descriptors it chose (oneDNN 2.x builds it from an
// op descriptor, 3.x directly).
struct Made {
  primitive prim;
  memory::desc src, dst, weights;
  std::string impl;
};

template <typename Op>
Made make(engine& eng, algorithm alg, const memory::desc& src, const memory::desc& w, const memory::desc& b,
          const memory::desc& dst, const memory::dims& strides, const memory::dims& pad, const primitive_attr& attr) {
  const memory::dims dil{0, 0};
#if DNNL_VERSION_MAJOR < 3
  typename Op::desc d(prop_kind::forward_inference, alg, src, w, b, dst, strides, dil, pad, pad);
  typename Op::primitive_desc pd(d, attr, eng);
#else
  typename Op::primitive_desc pd(eng, prop_kind::forward_inference, alg, src, w, b, dst, strides, dil, pad, pad, attr);
#endif
  return {Op(pd), pd.src_desc(), pd.dst_desc(), pd.weights_desc(), pd.impl_info_str()};
}

int main() {
  engine eng(engine::kind::cpu, 0);
  stream st(eng);
  const std::vector<Shape> shapes = {
      {"dw3x3 s2 64ch 256x256", 1, 64, 256, 256, 64, 3, 2, 64, false},
      {"dw3x3 s1 128ch 128x128", 1, 128, 128, 128, 128, 3, 1, 128, false},
      {"dw3x3 s1 96ch 56x56", 1, 96, 56, 56, 96, 3, 1, 96, false},
      {"3x3 16->16 256x256", 1, 16, 256, 256, 16, 3, 1, 1, false},
      {"3x3 32->16 256x256", 1, 32, 256, 256, 16, 3, 1, 1, false},
      {"3x3 64->64 64x64", 1, 64, 64, 64, 64, 3, 1, 1, false},
      {"3x3 128->128 28x28", 1, 128, 28, 28, 128, 3, 1, 1, false},
      {"1x1 16->64 256x256", 1, 16, 256, 256, 64, 1, 1, 1, false},
      {"1x1 128->32 64x64", 1, 128, 64, 64, 32, 1, 1, 1, false},
      {"1x1 1024->256 128x128", 1, 1024, 128, 128, 256, 1, 1, 1, false},
      {"3x3 s2 g2 32->32 112x112", 1, 32, 112, 112, 32, 3, 2, 2, false},
      {"3x3 g4 64->64 28x28", 1, 64, 28, 28, 64, 3, 1, 4, false},
      {"3x3 g10 160->160 14x14", 1, 160, 14, 14, 160, 3, 1, 10, false},
      {"deconv k4 s2 21->21 256x256", 1, 21, 256, 256, 21, 4, 2, 1, true},
      {"deconv k2 s2 32->16 128x128", 1, 32, 128, 128, 16, 2, 2, 1, true},
      {"deconv k4 s2 128->64 16x16", 1, 128, 16, 16, 64, 4, 2, 1, true},
  };
  std::printf("oneDNN %d.%d\n", DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
  for (const Shape& s : shapes) {
    const int64_t p = s.deconv ? (s.k - s.s + 1) / 2 : s.k / 2;
    const int64_t oh = s.deconv ? (s.h - 1) * s.s + s.k - 2 * p : (s.h + 2 * p - s.k) / s.s + 1;
    const int64_t ow = s.deconv ? (s.w - 1) * s.s + s.k - 2 * p : (s.w + 2 * p - s.k) / s.s + 1;
    memory::dims src{s.n, s.c, s.h, s.w}, dst{s.n, s.oc, oh, ow}, bias{s.oc};
    memory::dims wt = s.g > 1 ? memory::dims{s.g, s.oc / s.g, s.c / s.g, s.k, s.k} : memory::dims{s.oc, s.c, s.k, s.k};
    std::printf("| %s |", s.name);
    for (tag layout : {tag::nchw, tag::any}) {
      memory::desc src_md(src, dt::f32, layout), dst_md(dst, dt::f32, layout), w_md(wt, dt::f32, tag::any),
          b_md(bias, dt::f32, tag::a);
      post_ops ops;
      ops.append_eltwise(
#if DNNL_VERSION_MAJOR < 3
          1.f,
#endif
          algorithm::eltwise_relu, 0.f, 0.f);
      primitive_attr attr;
      attr.set_post_ops(ops);
      const Made made = s.deconv ? make<deconvolution_forward>(eng, algorithm::deconvolution_direct, src_md, w_md,
                                                               b_md, dst_md, {s.s, s.s}, {p, p}, attr)
                                 : make<convolution_forward>(eng, algorithm::convolution_direct, src_md, w_md, b_md,
                                                             dst_md, {s.s, s.s}, {p, p}, attr);
      const memory::desc &psrc = made.src, &pdst = made.dst, &pw = made.weights;
      primitive prim = made.prim;
      const std::string& impl = made.impl;
      memory msrc(psrc, eng), mdst(pdst, eng), mw(pw, eng), mb(b_md, eng);
      std::fill_n(static_cast<float*>(msrc.get_data_handle()), psrc.get_size() / 4, 0.5f);
      std::fill_n(static_cast<float*>(mw.get_data_handle()), pw.get_size() / 4, 0.01f);
      std::fill_n(static_cast<float*>(mb.get_data_handle()), s.oc, 0.1f);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, msrc}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, mdst}};
      std::printf(" %.3f (%s) |", time_ms(eng, st, prim, args), impl.c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}
