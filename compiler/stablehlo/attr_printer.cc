#include "compiler/stablehlo/attr_printer.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <vector>

#include "compiler/stablehlo/mlir_types_text.h"

namespace kiln::stablehlo {
namespace {

void AppendDouble(double v, std::string& out) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, p);
}

void AppendEscaped(std::string_view text, std::string& out) {
  out += '"';
  for (unsigned char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20 || ch >= 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%02X", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  out += '"';
}

void AppendFields(const TypeTable& types, std::vector<NamedAttr> fields, std::string& out, bool sort) {
  if (sort) {
    std::stable_sort(fields.begin(), fields.end(),
                     [](const NamedAttr& a, const NamedAttr& b) { return a.name < b.name; });
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ", ";
    out += fields[i].name;
    if (fields[i].value->kind == Attr::Kind::kUnit) continue;
    out += " = ";
    AppendAttrText(types, *fields[i].value, out);
  }
}

}  // namespace

std::string QuotedHloString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (unsigned char ch : text) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (ch < 0x20 || ch == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  out += '"';
  return out;
}

void AppendAttrText(const TypeTable& types, const Attr& a, std::string& out) {
  switch (a.kind) {
    case Attr::Kind::kUnit: out += "unit"; return;
    case Attr::Kind::kBool: out += a.b ? "true" : "false"; return;
    case Attr::Kind::kInt:
      out += std::to_string(a.i);
      if (a.type != kNoType) {
        out += " : ";
        AppendTypeText(types, a.type, out);
      }
      return;
    case Attr::Kind::kFloat:
      AppendDouble(a.f, out);
      if (a.type != kNoType) {
        out += " : ";
        AppendTypeText(types, a.type, out);
      }
      return;
    case Attr::Kind::kString: AppendEscaped(a.text, out); return;
    case Attr::Kind::kType: AppendTypeText(types, a.type, out); return;
    case Attr::Kind::kSymbol: out += "@" + a.text; return;
    case Attr::Kind::kEnum:
      if (a.dialect_name.empty()) {
        out += a.text;
      } else {
        out += "#stablehlo<" + a.dialect_name + " " + a.text + ">";
      }
      return;
    case Attr::Kind::kArray:
      out += '[';
      for (size_t i = 0; i < a.items.size(); ++i) {
        if (i > 0) out += ", ";
        AppendAttrText(types, *a.items[i], out);
      }
      out += ']';
      return;
    case Attr::Kind::kDenseArray:
      out += "array<";
      AppendTypeText(types, a.type, out);
      for (size_t i = 0; i < a.ints.size(); ++i) {
        out += i == 0 ? ": " : ", ";
        out += std::to_string(a.ints[i]);
      }
      out += '>';
      return;
    case Attr::Kind::kDense: {
      out += "dense<";
      const hlo::Literal& lit = *a.literal;
      const int64_t n = a.splat ? 1 : lit.element_count();
      if (!a.splat) out += '[';
      const int w = hlo::HostByteWidth(lit.shape().element_type());
      static const char kHex[] = "0123456789ABCDEF";
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0) out += ", ";
        out += "0x";
        for (int b = w - 1; b >= 0; --b) {
          const uint8_t byte = lit.data()[static_cast<size_t>(i * w + b)];
          out += kHex[byte >> 4];
          out += kHex[byte & 15];
        }
      }
      if (!a.splat) out += ']';
      out += "> : ";
      AppendTypeText(types, a.type, out);
      return;
    }
    case Attr::Kind::kDict:
      out += '{';
      AppendFields(types, a.fields, out, true);
      out += '}';
      return;
    case Attr::Kind::kStruct:
      out += "#" + a.dialect_name + "<";
      AppendFields(types, a.fields, out, true);
      out += '>';
      return;
    case Attr::Kind::kConvDims:
    case Attr::Kind::kOpaque:
      out += a.text;
      return;
  }
}

std::string SortedAttrsText(const TypeTable& types, std::span<const NamedAttr> attrs) {
  std::string out = "{";
  AppendFields(types, std::vector<NamedAttr>(attrs.begin(), attrs.end()), out, true);
  out += '}';
  return out;
}

}  // namespace kiln::stablehlo
