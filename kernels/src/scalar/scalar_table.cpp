#include "scalar_kernels.hpp"

#include "ck/kernels/dequant.hpp"

namespace ck::kernels {
namespace {

DequantTable make_scalar_table() {
    using T = GgmlType;
    DequantTable t;
    t.isa = Isa::scalar;
    auto set = [&](T type, DequantFn fn) { t.fn[static_cast<std::uint32_t>(type)] = fn; };
    set(T::f32, scalar::dequant_f32);
    set(T::f16, scalar::dequant_f16);
    set(T::bf16, scalar::dequant_bf16);
    set(T::q4_0, scalar::dequant_q4_0);
    set(T::q4_1, scalar::dequant_q4_1);
    set(T::q5_0, scalar::dequant_q5_0);
    set(T::q5_1, scalar::dequant_q5_1);
    set(T::q8_0, scalar::dequant_q8_0);
    set(T::iq4_nl, scalar::dequant_iq4_nl);
    set(T::mxfp4, scalar::dequant_mxfp4);
    set(T::nvfp4, scalar::dequant_nvfp4);
    set(T::q1_0, scalar::dequant_q1_0);
    set(T::q2_0, scalar::dequant_q2_0);
    set(T::q2_k, scalar::dequant_q2_k);
    set(T::q3_k, scalar::dequant_q3_k);
    set(T::q4_k, scalar::dequant_q4_k);
    set(T::q5_k, scalar::dequant_q5_k);
    set(T::q6_k, scalar::dequant_q6_k);
    set(T::iq4_xs, scalar::dequant_iq4_xs);
    set(T::tq1_0, scalar::dequant_tq1_0);
    set(T::tq2_0, scalar::dequant_tq2_0);
    set(T::iq2_xxs, scalar::dequant_iq2_xxs);
    set(T::iq2_xs, scalar::dequant_iq2_xs);
    set(T::iq2_s, scalar::dequant_iq2_s);
    set(T::iq3_xxs, scalar::dequant_iq3_xxs);
    set(T::iq3_s, scalar::dequant_iq3_s);
    set(T::iq1_s, scalar::dequant_iq1_s);
    set(T::iq1_m, scalar::dequant_iq1_m);
    return t;
}

}  // namespace

const DequantTable& scalar_dequant_table() {
    static const DequantTable table = make_scalar_table();
    return table;
}

}  // namespace ck::kernels
