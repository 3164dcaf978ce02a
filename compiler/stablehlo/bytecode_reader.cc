// The bytecode's header and tables: sections, strings, dialects and op
// names, attribute/type offsets, properties (bytecode_internal.h).
#include "compiler/stablehlo/bytecode_reader.h"

#include <charconv>

#include "compiler/stablehlo/bytecode_internal.h"

namespace kiln::stablehlo {
namespace bytecode {
namespace {

constexpr std::string_view kMagic("ML\xef" "R", 4);

// "StableHLO_v1.19.0" -> 1.19.0; producers that name no version read as the
// newest VHLO.
VhloVersion ParseProducerVersion(std::string_view producer) {
  VhloVersion v{99, 0, 0};
  const size_t at = producer.find("_v");
  if (!producer.starts_with("StableHLO") || at == std::string_view::npos) return v;
  const char* p = producer.data() + at + 2;
  const char* end = producer.data() + producer.size();
  int parts[3] = {0, 0, 0};
  for (int i = 0; i < 3 && p < end; ++i) {
    auto [next, ec] = std::from_chars(p, end, parts[i]);
    if (ec != std::errc()) return v;
    p = next;
    if (p < end && *p == '.') ++p;
  }
  return {parts[0], parts[1], parts[2]};
}

}  // namespace

Result<std::string_view> Reader::String(uint64_t index) const {
  if (index >= strings_.size()) {
    return Fail("string " + std::to_string(index) + " of " + std::to_string(strings_.size()) + " does not exist");
  }
  return strings_[index];
}

Status Reader::ReadStringSection() {
  if (!sections_[kStringSection]) return Fail("no string section");
  ByteStream s = StreamOf(*sections_[kStringSection], "string section");
  KILN_ASSIGN_OR_RETURN(uint64_t count, s.Count());
  std::vector<uint64_t> lengths(count);
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(lengths[count - 1 - i], s.VarInt());
  }
  strings_.reserve(count);
  for (uint64_t length : lengths) {
    KILN_ASSIGN_OR_RETURN(std::string_view text, s.Bytes(length));
    if (!text.empty() && text.back() == '\0') text.remove_suffix(1);
    strings_.push_back(text);
  }
  return Ok();
}

Status Reader::ReadDialectSection() {
  if (!sections_[kDialectSection]) return Fail("no dialect section");
  ByteStream s = StreamOf(*sections_[kDialectSection], "dialect section");
  KILN_ASSIGN_OR_RETURN(uint64_t count, s.Count());
  for (uint64_t i = 0; i < count; ++i) {
    bool versioned = false;
    uint64_t name_index = 0;
    if (version_ >= 1) {
      KILN_ASSIGN_OR_RETURN(name_index, s.VarIntWithFlag(versioned));
    } else {
      KILN_ASSIGN_OR_RETURN(name_index, s.VarInt());
    }
    KILN_ASSIGN_OR_RETURN(std::string_view dialect, String(name_index));
    dialects_.push_back(dialect);
    if (versioned) {
      KILN_ASSIGN_OR_RETURN(Section version, s.ReadSection());
      if (version.id != kDialectVersionsSection) return s.Fail("a dialect version is not a version section");
    }
  }
  if (version_ >= kElideBlockArgLocationVersion) {
    KILN_RETURN_IF_ERROR(s.Count());  // the number of op names, which the groups give again
  }
  while (!s.empty()) {
    KILN_ASSIGN_OR_RETURN(uint64_t dialect, s.VarInt());
    if (dialect >= dialects_.size()) return s.Fail("op names of an unknown dialect");
    KILN_ASSIGN_OR_RETURN(uint64_t names, s.Count());
    for (uint64_t i = 0; i < names; ++i) {
      uint64_t name_index = 0;
      if (version_ >= kNativePropertiesVersion) {
        bool registered = false;
        KILN_ASSIGN_OR_RETURN(name_index, s.VarIntWithFlag(registered));
      } else {
        KILN_ASSIGN_OR_RETURN(name_index, s.VarInt());
      }
      KILN_ASSIGN_OR_RETURN(std::string_view name, String(name_index));
      op_names.push_back({dialects_[dialect], name});
    }
  }
  return Ok();
}

Status Reader::ReadAttrTypeOffsets() {
  if (!sections_[kAttrTypeOffsetSection] || !sections_[kAttrTypeSection]) {
    return Fail("no attribute and type sections");
  }
  ByteStream s = StreamOf(*sections_[kAttrTypeOffsetSection], "attribute/type offset section");
  KILN_ASSIGN_OR_RETURN(uint64_t attrs, s.Count());
  KILN_ASSIGN_OR_RETURN(uint64_t types, s.Count());
  if (attrs + types > s.remaining()) return s.Fail("more attributes and types than offsets");
  const Section& data = *sections_[kAttrTypeSection];
  size_t offset = data.begin;
  auto read_group = [&](uint64_t total, std::vector<TableEntry>& out) -> Status {
    while (out.size() < total) {
      KILN_ASSIGN_OR_RETURN(uint64_t dialect, s.VarInt());
      if (dialect >= dialects_.size()) return s.Fail("entries of an unknown dialect");
      KILN_ASSIGN_OR_RETURN(uint64_t count, s.Count());
      if (count > total - out.size()) return s.Fail("more entries than announced");
      for (uint64_t i = 0; i < count; ++i) {
        bool custom = false;
        KILN_ASSIGN_OR_RETURN(uint64_t size, s.VarIntWithFlag(custom));
        if (size > data.end - offset) return s.Fail("an entry runs past the attribute/type section");
        out.push_back({static_cast<uint32_t>(dialect), offset, offset + static_cast<size_t>(size), custom});
        offset += static_cast<size_t>(size);
      }
    }
    return Ok();
  };
  KILN_RETURN_IF_ERROR(read_group(attrs, attr_entries_));
  KILN_RETURN_IF_ERROR(read_group(types, type_entries_));
  attrs_.assign(attr_entries_.size(), nullptr);
  attr_state_.assign(attr_entries_.size(), 0);
  types_.assign(type_entries_.size(), kNoType);
  type_state_.assign(type_entries_.size(), 0);
  return Ok();
}

Status Reader::ReadPropertiesOffsets() {
  if (!sections_[kPropertiesSection]) return Ok();
  ByteStream s = StreamOf(*sections_[kPropertiesSection], "properties section");
  KILN_ASSIGN_OR_RETURN(uint64_t count, s.Count());
  properties_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(uint64_t size, s.VarInt());
    const size_t begin = s.offset();
    KILN_RETURN_IF_ERROR(s.Bytes(size));
    properties_.emplace_back(begin, s.offset());
  }
  return Ok();
}

Result<ByteStream> Reader::PropertiesStream(uint64_t index) const {
  if (index >= properties_.size()) return Fail("properties " + std::to_string(index) + " do not exist");
  return ByteStream(input_, properties_[index].first, properties_[index].second, "properties");
}

Result<MlirModule> Reader::Run() {
  if (!input_.starts_with(kMagic)) return Fail("no MLIR bytecode magic");
  ByteStream header(input_, kMagic.size(), input_.size(), "header");
  KILN_ASSIGN_OR_RETURN(version_, header.VarInt());
  if (version_ > kMaxSupportedVersion) {
    return Fail("bytecode version " + std::to_string(version_) + " is newer than the newest known (" +
                std::to_string(kMaxSupportedVersion) + ")");
  }
  if (version_ < 1) return Fail("bytecode version 0 is not supported");
  KILN_ASSIGN_OR_RETURN(std::string_view producer, header.CString());
  vhlo_version_ = ParseProducerVersion(producer);
  while (!header.empty()) {
    KILN_ASSIGN_OR_RETURN(Section section, header.ReadSection());
    if (section.id >= kNumSections) return header.Fail("unknown section " + std::to_string(section.id));
    if (sections_[section.id]) return header.Fail("section " + std::to_string(section.id) + " appears twice");
    sections_[section.id] = section;
  }
  KILN_RETURN_IF_ERROR(ReadStringSection());
  KILN_RETURN_IF_ERROR(ReadDialectSection());
  KILN_RETURN_IF_ERROR(ReadAttrTypeOffsets());
  KILN_RETURN_IF_ERROR(ReadPropertiesOffsets());
  if (!sections_[kIRSection]) return Fail("no IR section");
  KILN_RETURN_IF_ERROR(ReadIR());
  return std::move(module_);
}

}  // namespace bytecode

Result<MlirModule> ReadBytecode(std::string_view bytes, std::string_view name) {
  bytecode::Reader reader(bytes, name);
  return reader.Run();
}

}  // namespace kiln::stablehlo
