// CHLO's special functions (chlo_math.h): erf, erfc, erf_inv, lgamma,
// digamma, bessel_i1e and next_after.
#include <array>
#include <cmath>
#include <numbers>
#include <span>

#include "compiler/stablehlo/chlo_math.h"

namespace kiln::stablehlo::chlo {
namespace {

using hlo::PrimitiveType;

bool IsF64(const ExprBuilder& m) { return m.type() == PrimitiveType::kF64; }

// c[0] x^(n-1) + ... + c[n-1], by Horner's rule.
I Polynomial(ExprBuilder& m, I x, std::span<const double> c) {
  if (c.empty()) return m.C(0);
  I p = m.C(c[0]);
  for (size_t i = 1; i < c.size(); ++i) p = m.Add(m.Mul(p, x), m.C(c[i]));
  return p;
}

// Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl).
I Chebyshev(ExprBuilder& m, I x, std::span<const double> c) {
  I b0 = m.C(0);
  I b1 = m.C(0);
  I b2 = m.C(0);
  for (double coefficient : c) {
    b2 = b1;
    b1 = b0;
    b0 = m.Add(m.Sub(m.Mul(x, b1), b2), m.C(coefficient));
  }
  return m.Mul(m.Sub(b0, b2), m.C(0.5));
}

// f32 coefficients are rounded to float first, as the legalization writes
// them as float literals.
std::vector<double> AsFloat(std::span<const double> c) {
  std::vector<double> out;
  for (double v : c) out.push_back(static_cast<float>(v));
  return out;
}

// erfc for |x| >= 1 (Cephes), f64.
I ErfcF64GeOne(ExprBuilder& m, I x) {
  static constexpr double kMaxLog = 7.09782712893383996843E2;
  static constexpr std::array<double, 9> kP = {
      2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
      4.86371970985681366614E1,   1.96520832956077098242E2,  5.26445194995477358631E2,
      9.34528527171957607540E2,   1.02755188689515710272E3,  5.57535335369399327526E2};
  static constexpr std::array<double, 9> kQ = {
      1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
      3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
      2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2};
  static constexpr std::array<double, 6> kR = {5.64189583547755073984E-1, 1.27536670759978104416E0,
                                               5.01905042251180477414E0,  6.16021097993053585195E0,
                                               7.40974269950448939160E0,  2.97886665372100240670E0};
  static constexpr std::array<double, 7> kS = {1.00000000000000000000E0, 2.26052863220117276590E0,
                                               9.39603524938001434673E0, 1.20489539808096656605E1,
                                               1.70814450747565897222E1, 9.60896809063285878198E0,
                                               3.36907645100081516050E0};
  I z = m.Neg(m.Mul(x, x));
  I exp_z = m.Exp(z);
  I abs_x = m.Abs(x);
  I small = m.Div(m.Mul(exp_z, Polynomial(m, abs_x, kP)), Polynomial(m, abs_x, kQ));
  I large = m.Div(m.Mul(exp_z, Polynomial(m, abs_x, kR)), Polynomial(m, abs_x, kS));
  I approx = m.Select(m.Lt(abs_x, m.C(8)), small, large);
  I zero = m.C(0);
  I clamped = m.Select(m.Lt(z, m.C(-kMaxLog)), zero, approx);
  return m.Select(m.Lt(x, zero), m.Sub(m.C(2), clamped), clamped);
}

// erf for |x| <= 1 (Cephes), f64.
I ErfF64LeOne(ExprBuilder& m, I x) {
  static constexpr std::array<double, 5> kT = {9.60497373987051638749E0, 9.00260197203842689217E1,
                                               2.23200534594684319226E3, 7.00332514112805075473E3,
                                               5.55923013010394962768E4};
  static constexpr std::array<double, 6> kU = {1.00000000000000000000E0, 3.35617141647503099647E1,
                                               5.21357949780152679795E2, 4.59432382970980127987E3,
                                               2.26290000613890934246E4, 4.92673942608635921086E4};
  I x2 = m.Mul(x, x);
  return m.Div(m.Mul(x, Polynomial(m, x2, kT)), Polynomial(m, x2, kU));
}

// erfc for |x| >= 1 (Cephes), f32.
I ErfcF32GeOne(ExprBuilder& m, I x) {
  static constexpr double kMaxLog = 88.72283905206835;
  static constexpr std::array<double, 9> kP = {
      +2.326819970068386E-2, -1.387039388740657E-1, +3.687424674597105E-1, -5.824733027278666E-1,
      +6.210004621745983E-1, -4.944515323274145E-1, +3.404879937665872E-1, -2.741127028184656E-1,
      +5.638259427386472E-1};
  static constexpr std::array<double, 8> kR = {-1.047766399936249E+1, +1.297719955372516E+1,
                                               -7.495518717768503E+0, +2.921019019210786E+0,
                                               -1.015265279202700E+0, +4.218463358204948E-1,
                                               -2.820767439740514E-1, +5.641895067754075E-1};
  I x2 = m.Mul(x, x);
  I z = m.Neg(x2);
  I abs_x = m.Abs(x);
  I one = m.C(1);
  I inv_x2 = m.Div(one, x2);
  I scale = m.Mul(m.Exp(z), m.Div(one, abs_x));
  I poly = m.Select(m.Lt(abs_x, m.C(2)), Polynomial(m, inv_x2, AsFloat(kP)), Polynomial(m, inv_x2, AsFloat(kR)));
  I approx = m.Mul(scale, poly);
  I zero = m.C(0);
  I clamped = m.Select(m.Lt(z, m.C(-kMaxLog)), zero, approx);
  return m.Select(m.Lt(x, zero), m.Sub(m.C(2), clamped), clamped);
}

// erf for |x| <= 1 (Cephes), f32.
I ErfF32LeOne(ExprBuilder& m, I x) {
  static constexpr std::array<double, 7> kT = {+7.853861353153693E-5, -8.010193625184903E-4,
                                               +5.188327685732524E-3, -2.685381193529856E-2,
                                               +1.128358514861418E-1, -3.761262582423300E-1,
                                               +1.128379165726710E+0};
  return m.Mul(x, Polynomial(m, m.Mul(x, x), AsFloat(kT)));
}

// erf over all of f32 (the rational approximation Eigen uses).
I ErfF32(ExprBuilder& m, I x) {
  static constexpr std::array<double, 7> kAlpha = {-2.72614225801306e-10, 2.77068142495902e-08,
                                                   -2.10102402082508e-06, -5.69250639462346e-05,
                                                   -7.34990630326855e-04, -2.95459980854025e-03,
                                                   -1.60960333262415e-02};
  static constexpr std::array<double, 5> kBeta = {-1.45660718464996e-05, -2.13374055278905e-04,
                                                  -1.68282697438203e-03, -7.37332916720468e-03,
                                                  -1.42647390514189e-02};
  I clamped = m.Clamp(m.C(-4), x, m.C(4));
  I x2 = m.Mul(clamped, clamped);
  I erf = m.Div(m.Mul(clamped, Polynomial(m, x2, AsFloat(kAlpha))), Polynomial(m, x2, AsFloat(kBeta)));
  return m.Clamp(m.C(-1), erf, m.C(1));
}

}  // namespace

I Erf(ExprBuilder& m, I x) {
  if (!IsF64(m)) return ErfF32(m, x);
  I one = m.C(1);
  return m.Select(m.Lt(m.Abs(x), one), ErfF64LeOne(m, x), m.Sub(one, ErfcF64GeOne(m, x)));
}

I Erfc(ExprBuilder& m, I x) {
  I one = m.C(1);
  I lt_one = m.Lt(m.Abs(x), one);
  if (IsF64(m)) return m.Select(lt_one, m.Sub(one, ErfF64LeOne(m, x)), ErfcF64GeOne(m, x));
  return m.Select(lt_one, m.Sub(one, ErfF32LeOne(m, x)), ErfcF32GeOne(m, x));
}

I ErfInv(ExprBuilder& m, I x) {
  // w = -log(1 - x^2), then a polynomial in w (Giles' approximation).
  I w = m.Neg(m.Log1p(m.Mul(x, m.Neg(x))));
  I p;
  if (!IsF64(m)) {
    static constexpr std::array<double, 9> kLt5 = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                                   -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                                   -0.00417768164,  0.246640727,    1.50140941};
    static constexpr std::array<double, 9> kGe5 = {-0.000200214257, 0.000100950558, 0.00134934322,
                                                   -0.00367342844,  0.00573950773,  -0.0076224613,
                                                   0.00943887047,   1.00167406,     2.83297682};
    I lt = m.Lt(w, m.C(5));
    auto coefficient = [&](size_t i) {
      return m.Select(lt, m.C(static_cast<float>(kLt5[i])), m.C(static_cast<float>(kGe5[i])));
    };
    w = m.Select(lt, m.Sub(w, m.C(2.5)), m.Sub(m.Sqrt(w), m.C(3)));
    p = coefficient(0);
    for (size_t i = 1; i < kLt5.size(); ++i) p = m.Add(coefficient(i), m.Mul(p, w));
  } else {
    static constexpr std::array<double, 23> kLt625 = {
        -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
        1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
        6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693,     1.6536545626831027356};
    static constexpr std::array<double, 19> kLt16 = {
        2.2137376921775787049e-09,  9.0756561938885390979e-08,  -2.7517406297064545428e-07,
        1.8239629214389227755e-08,  1.5027403968909827627e-06,  -4.013867526981545969e-06,
        2.9234449089955446044e-06,  1.2475304481671778723e-05,  -4.7318229009055733981e-05,
        6.8284851459573175448e-05,  2.4031110387097893999e-05,  -0.0003550375203628474796,
        0.00095328937973738049703,  -0.0016882755560235047313,  0.0024914420961078508066,
        -0.0037512085075692412107,  0.005370914553590063617,    1.0052589676941592334,
        3.0838856104922207635};
    static constexpr std::array<double, 17> kGe16 = {
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
        2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
        7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977,      4.8499064014085844221};
    I lt625 = m.Lt(w, m.C(6.25));
    I lt16 = m.Lt(w, m.C(16));
    auto coefficient = [&](size_t i) {
      I c = m.C(kLt625[i]);
      if (i < kLt16.size()) c = m.Select(lt625, c, m.C(kLt16[i]));
      if (i < kGe16.size()) c = m.Select(lt16, c, m.C(kGe16[i]));
      return c;
    };
    I shifted = m.Sub(m.Sqrt(w), m.Select(lt16, m.C(3.25), m.C(5.0)));
    w = m.Select(lt625, m.Sub(w, m.C(3.125)), shifted);
    p = coefficient(0);
    for (size_t i = 1; i < 17; ++i) p = m.Add(coefficient(i), m.Mul(p, w));
    for (size_t i = 17; i < 19; ++i) p = m.Select(lt16, m.Add(coefficient(i), m.Mul(p, w)), p);
    for (size_t i = 19; i < 23; ++i) p = m.Select(lt625, m.Add(coefficient(i), m.Mul(p, w)), p);
  }
  I result = m.Mul(p, x);
  // erf_inv(+-1) = +-inf.
  return m.Select(m.Eq(m.Abs(x), m.C(1)), m.Mul(x, m.Inf()), result);
}

namespace {

// The Lanczos approximation with g = 7, n = 9.
constexpr double kLanczosGamma = 7;
constexpr double kBaseLanczosCoefficient = 0.99999999999980993227684700473478;
constexpr std::array<double, 8> kLanczosCoefficients = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

}  // namespace

I Lgamma(ExprBuilder& m, I x) {
  I half = m.C(0.5);
  I one = m.C(1);
  // z = -x for x < 1/2 (reflection), x - 1 otherwise.
  I reflect = m.Lt(x, half);
  I z = m.Select(reflect, m.Neg(x), m.Sub(x, one));
  I a = m.C(kBaseLanczosCoefficient);
  for (size_t i = 0; i < kLanczosCoefficients.size(); ++i) {
    a = m.Add(a, m.Div(m.C(kLanczosCoefficients[i]), m.Add(z, m.C(static_cast<double>(i + 1)))));
  }
  // log(t) = log(g + 1/2) + log1p(z / (g + 1/2)), t = z + g + 1/2.
  I g_half = m.C(kLanczosGamma + 0.5);
  I t = m.Add(g_half, z);
  I log_t = m.Add(m.C(std::log(kLanczosGamma + 0.5)), m.Log1p(m.Div(z, g_half)));
  // (z + 1/2) log t - t, as (z + 1/2 - t / log t) log t to avoid overflow.
  I r = m.Mul(m.Sub(m.Add(z, half), m.Div(t, log_t)), log_t);
  I lgamma = m.Add(m.Add(m.C((std::log(2.0) + std::log(std::numbers::pi)) / 2), r), m.Log(a));
  // Reflection: log(pi) - lgamma(1 - x) - log|sin(pi x)|, with the fraction
  // of |x| folded into [0, 1/2] for precision.
  I abs = m.Abs(x);
  I frac = m.Sub(abs, m.Floor(abs));
  frac = m.Select(m.Lt(half, frac), m.Sub(one, frac), frac);
  I denom = m.Log(m.Sin(m.Mul(m.C(std::numbers::pi), frac)));
  I reflected = m.Sub(m.Sub(m.C(std::log(std::numbers::pi)), denom), lgamma);
  reflected = m.Select(m.IsFinite(denom), reflected, m.Neg(denom));
  lgamma = m.Select(reflect, reflected, lgamma);
  // lgamma(+-inf) = +inf.
  I is_inf = m.Eq(m.Abs(x), m.Inf());
  return m.Select(is_inf, m.Inf(), lgamma);
}

I Digamma(ExprBuilder& m, I x) {
  I half = m.C(0.5);
  I one = m.C(1);
  I zero = m.C(0);
  I reflect = m.Lt(x, half);
  I z = m.Select(reflect, m.Neg(x), m.Sub(x, one));
  I a = m.C(kBaseLanczosCoefficient);
  I a_prime = zero;
  for (size_t i = 0; i < kLanczosCoefficients.size(); ++i) {
    I coefficient = m.C(kLanczosCoefficients[i]);
    I zi = m.Add(z, m.C(static_cast<double>(i + 1)));
    a_prime = m.Sub(a_prime, m.Div(coefficient, m.Mul(zi, zi)));
    a = m.Add(a, m.Div(coefficient, zi));
  }
  I g_half = m.C(kLanczosGamma + 0.5);
  I t = m.Add(g_half, z);
  I log_t = m.Add(m.C(std::log(kLanczosGamma + 0.5)), m.Log1p(m.Div(z, g_half)));
  I digamma = m.Sub(m.Add(log_t, m.Div(a_prime, a)), m.Div(m.C(kLanczosGamma), t));
  // Reflection: digamma(1 - x) - pi cot(pi x), x shifted into [-1/2, 1/2].
  I reduced = m.Add(x, m.Abs(m.Floor(m.Add(x, half))));
  I pi = m.C(std::numbers::pi);
  I arg = m.Mul(pi, reduced);
  I reflected = m.Sub(digamma, m.Div(m.Mul(pi, m.Cos(arg)), m.Sin(arg)));
  digamma = m.Select(reflect, reflected, digamma);
  // Poles: nan at negative integers, -inf at zero.
  I negative_integer = m.And(m.Lt(x, zero), m.Eq(x, m.Floor(x)));
  I result = m.Select(negative_integer, m.NaN(), digamma);
  return m.Select(m.Eq(x, zero), m.Inf(/*negative=*/true), result);
}

I BesselI1e(ExprBuilder& m, I x) {
  static constexpr std::array<double, 29> kA64 = {
      2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
      -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
      3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
      -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
      9.38153738649577178388E-9,  -4.44505912879632808065E-8, 2.00329475355213526229E-7,
      -8.56872026469545474066E-7, 3.47025130813767847674E-6,  -1.32731636560394358279E-5,
      4.78156510755005422638E-5,  -1.61760815825896745588E-4, 5.12285956168575772895E-4,
      -1.51357245063125314899E-3, 4.15642294431288815669E-3,  -1.05640848946261981558E-2,
      2.47264490306265168283E-2,  -5.29459812080949914269E-2, 1.02643658689847095384E-1,
      -1.76416518357834055153E-1, 2.52587186443633654823E-1};
  static constexpr std::array<double, 25> kB64 = {
      7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
      -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
      -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
      4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
      -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
      3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
      -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
      -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
      7.78576235018280120474E-1};
  // The f32 series are the tails of the f64 ones.
  std::span<const double> a(kA64);
  std::span<const double> b(kB64);
  std::vector<double> a32, b32;
  if (!IsF64(m)) {
    a32 = AsFloat(a.subspan(12));
    b32 = AsFloat(b.subspan(18));
    a = a32;
    b = b32;
  }
  I z = m.Abs(x);
  I two = m.C(2);
  I le8 = m.Mul(z, Chebyshev(m, m.Sub(m.Mul(m.C(0.5), z), two), a));
  I gt8 = m.Div(Chebyshev(m, m.Sub(m.Div(m.C(32), z), two), b), m.Sqrt(z));
  return m.Mul(m.Sign(x), m.Select(m.Le(z, m.C(8)), le8, gt8));
}

I NextAfter(ExprBuilder& m, I x, I y) {
  const int bits = hlo::BitWidth(x->shape().element_type());
  const PrimitiveType int_type = bits == 64 ? PrimitiveType::kS64 : bits == 32 ? PrimitiveType::kS32
                                                                                : PrimitiveType::kS16;
  hlo::Shape int_shape = x->shape();
  int_shape.set_element_type(int_type);
  ExprBuilder n(m.emit(), int_shape);
  I x_int = m.BitcastTo(x, int_type);
  I y_int = m.BitcastTo(y, int_type);
  I nan_input = m.Or(m.Ne(x, x), m.Ne(y, y));
  I nan_int = m.BitcastTo(m.NaN(), int_type);
  const int64_t sign_bit = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
  I sign_mask = n.C(static_cast<double>(sign_bit));
  I magnitude_mask = n.C(static_cast<double>(~sign_bit));
  if (bits == 64) {
    sign_mask = n.Bits(static_cast<uint64_t>(sign_bit));
    magnitude_mask = n.Bits(static_cast<uint64_t>(~sign_bit));
  }
  I x_abs = n.And(x_int, magnitude_mask);
  I y_abs = n.And(y_int, magnitude_mask);
  I equal = m.Eq(x, y);
  I zero = n.C(0);
  I x_zero = n.Eq(x_abs, zero);
  I y_zero = n.Eq(y_abs, zero);
  I x_sign = n.And(x_int, sign_mask);
  I y_sign = n.And(y_int, sign_mask);
  I one = n.C(1);
  I from_zero = n.Or(y_sign, one);
  I smaller = n.Or(n.Gt(x_abs, y_abs), n.Ne(x_sign, y_sign));
  I step = n.Select(smaller, n.C(-1), one);
  I result = n.Add(x_int, step);
  result = n.Select(x_zero, n.Select(y_zero, y_int, from_zero), result);
  result = n.Select(equal, y_int, result);
  result = n.Select(nan_input, nan_int, result);
  return n.BitcastTo(result, x->shape().element_type());
}

}  // namespace kiln::stablehlo::chlo
