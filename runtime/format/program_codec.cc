// SerializeProgram / ParseProgram: Program <-> envelope + FlatBuffer.
#include <flatbuffers/flatbuffers.h>

#include <bit>
#include <cstring>
#include <string>

#include "runtime/format/executable_envelope.h"
#include "runtime/format/program.h"
#include "schema/executable_generated.h"

namespace kiln::runtime {
namespace {

namespace fb = ::kiln::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<fb::Block> BuildBlock(FlatBufferBuilder& b, const std::vector<int64_t>& dims) {
  return fb::CreateBlock(b, b.CreateVector(dims));
}

Offset<flatbuffers::Vector<Offset<fb::Block>>> BuildBlocks(
    FlatBufferBuilder& b, const std::vector<std::vector<int64_t>>& blocks) {
  std::vector<Offset<fb::Block>> out;
  out.reserve(blocks.size());
  for (const auto& dims : blocks) out.push_back(BuildBlock(b, dims));
  return b.CreateVector(out);
}

Offset<fb::Kernel> BuildKernel(FlatBufferBuilder& b, const ProgramKernel& k) {
  auto operand_blocks = BuildBlocks(b, k.tiling.operand_blocks);
  auto result_blocks = BuildBlocks(b, k.tiling.result_blocks);
  auto tiling = fb::CreateTiling(b, operand_blocks, result_blocks,
                                 b.CreateVector(k.tiling.grid), k.tiling.vmem_bytes);
  return fb::CreateKernel(b, b.CreateString(k.name), b.CreateString(k.kind),
                          b.CreateString(k.hlo), b.CreateVector(k.inputs),
                          b.CreateVector(k.outputs), tiling, k.fused_instructions, k.flops,
                          k.bytes_accessed, k.estimated_seconds);
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// Copied as bytes: FlatBuffers 2.0's verifier aligns a vector only to its
// 4-byte length, so the 8-byte elements of a hostile buffer may sit
// misaligned (kiln's writer aligns them; the host is little-endian, as
// the format).
template <typename T>
std::vector<T> Vec(const flatbuffers::Vector<T>* v) {
  static_assert(std::endian::native == std::endian::little);
  std::vector<T> out(v ? v->size() : 0);
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

std::vector<std::vector<int64_t>> Blocks(const flatbuffers::Vector<Offset<fb::Block>>* v) {
  std::vector<std::vector<int64_t>> out;
  if (!v) return out;
  for (const fb::Block* block : *v) out.push_back(Vec(block->dims()));
  return out;
}

ProgramKernel DecodeKernel(const fb::Kernel& k) {
  ProgramKernel out;
  out.name = Str(k.name());
  out.kind = Str(k.kind());
  out.hlo = Str(k.hlo());
  out.inputs = Vec(k.inputs());
  out.outputs = Vec(k.outputs());
  if (const fb::Tiling* t = k.tiling()) {
    out.tiling.operand_blocks = Blocks(t->operand_blocks());
    out.tiling.result_blocks = Blocks(t->result_blocks());
    out.tiling.grid = Vec(t->grid());
    out.tiling.vmem_bytes = t->vmem_bytes();
  }
  out.fused_instructions = k.fused_instructions();
  out.flops = k.flops();
  out.bytes_accessed = k.bytes_accessed();
  out.estimated_seconds = k.estimated_seconds();
  return out;
}

// At least the bytes SerializeProgram writes: every string and vector with
// its length word and padding, and a generous vtable and table per object
// (128 bytes each, past the schema's widest). Checked before building, so a
// program FlatBuffers cannot hold (2 GiB) is refused instead of aborting.
uint64_t SerializedSizeBound(const Program& p) {
  constexpr uint64_t kObject = 128;
  auto text = [](const std::string& s) -> uint64_t { return s.size() + 8; };
  auto words = [](size_t n, size_t width) -> uint64_t { return n * width + 8; };
  uint64_t bound = kEnvelopeHeaderBytes + kObject + text(p.key) + text(p.chip) + text(p.plan) + text(p.options) +
                   text(p.result_shape) + text(p.topology) + text(p.global_result_shape) + text(p.result_sharding) +
                   words(p.parameters.size(), 4) + words(p.results.size(), 4) + words(p.buffers.size(), 4) +
                   words(p.kernels.size(), 4);
  for (const std::string& s : p.global_parameter_shapes) bound += text(s) + 4;
  for (const std::string& s : p.parameter_shardings) bound += text(s) + 4;
  for (const ProgramBuffer& buf : p.buffers) {
    bound += kObject + text(buf.shape) + text(buf.literal) + words(buf.parameter_path.size(), 8);
  }
  for (const ProgramKernel& k : p.kernels) {
    bound += 2 * kObject + text(k.name) + text(k.kind) + text(k.hlo) + words(k.inputs.size(), 4) +
             words(k.outputs.size(), 4) + words(k.tiling.grid.size(), 8);
    for (const auto* blocks : {&k.tiling.operand_blocks, &k.tiling.result_blocks}) {
      bound += words(blocks->size(), 4);
      for (const std::vector<int64_t>& dims : *blocks) bound += kObject + words(dims.size(), 8);
    }
  }
  return bound;
}

Error TooLarge(const Program& p, uint64_t bytes, bool bound) {
  return ResourceExhaustedError("the program's executable would be " + std::string(bound ? "up to " : "") +
                                std::to_string(bytes) + " bytes (" + std::to_string(p.kernels.size()) +
                                " kernels, " + std::to_string(p.buffers.size()) + " buffers), over the " +
                                std::to_string(kMaxExecutableBytes) + "-byte limit on executables")
      .WithReason("program_too_large");
}

}  // namespace

Result<std::vector<uint8_t>> SerializeProgram(const Program& p) {
  // FlatBuffers holds at most 2 GiB: past the bound's reach of it, refuse
  // before building (the builder would abort).
  if (const uint64_t bound = SerializedSizeBound(p); bound >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return TooLarge(p, bound, /*bound=*/true);
  }
  FlatBufferBuilder b(1024);
  std::vector<Offset<fb::Buffer>> buffers;
  buffers.reserve(p.buffers.size());
  for (const ProgramBuffer& buf : p.buffers) {
    buffers.push_back(fb::CreateBuffer(b, static_cast<fb::BufferKind>(buf.kind),
                                       b.CreateString(buf.shape), buf.size_bytes, buf.offset,
                                       buf.parameter_number, b.CreateVector(buf.parameter_path),
                                       b.CreateString(buf.literal)));
  }
  std::vector<Offset<fb::Kernel>> kernels;
  kernels.reserve(p.kernels.size());
  for (const ProgramKernel& k : p.kernels) kernels.push_back(BuildKernel(b, k));
  auto root = fb::CreateExecutable(
      b, p.format_version, b.CreateString(p.key), b.CreateString(p.chip), b.CreateString(p.plan),
      b.CreateString(p.options), b.CreateVector(buffers), b.CreateVector(kernels),
      b.CreateVector(p.parameters), b.CreateString(p.result_shape), b.CreateVector(p.results),
      p.peak_hbm_bytes, p.estimated_seconds, p.compile_ms,
      p.topology.empty() ? 0 : b.CreateString(p.topology), p.replica_count == 1 ? 0 : p.replica_count,
      p.global_parameter_shapes.empty() ? 0 : b.CreateVectorOfStrings(p.global_parameter_shapes),
      p.parameter_shardings.empty() ? 0 : b.CreateVectorOfStrings(p.parameter_shardings),
      p.global_result_shape.empty() ? 0 : b.CreateString(p.global_result_shape),
      p.result_sharding.empty() ? 0 : b.CreateString(p.result_sharding));
  fb::FinishExecutableBuffer(b, root);
  if (const uint64_t bytes = b.GetSize() + kEnvelopeHeaderBytes; bytes > kMaxExecutableBytes) {
    return TooLarge(p, bytes, /*bound=*/false);
  }
  return WrapInEnvelope(p.format_version, {b.GetBufferPointer(), b.GetSize()});
}

Result<Program> ParseProgram(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(EnvelopeContents envelope, OpenEnvelope(bytes));
  if (envelope.format_version != kExecutableFormatVersion) {
    return UnimplementedError("executable format version " + std::to_string(envelope.format_version) +
                              ", this kiln reads " + std::to_string(kExecutableFormatVersion));
  }
  // The verifier checks the file identifier too, once it knows the payload
  // holds one (ExecutableBufferHasIdentifier alone reads bytes 4..7 of a
  // payload that may be shorter).
  if (envelope.payload.size() + kEnvelopeHeaderBytes > kMaxExecutableBytes) {
    return ResourceExhaustedError("executable of " + std::to_string(envelope.payload.size() + kEnvelopeHeaderBytes) +
                                  " bytes is over the " + std::to_string(kMaxExecutableBytes) + "-byte limit");
  }
  // Every table takes at least its 4-byte vtable offset, so no well-formed
  // payload holds more tables than this: the limit refuses nothing kiln
  // writes, however many kernels, and still bounds the walk.
  flatbuffers::Verifier::Options limits;
  limits.max_tables = static_cast<flatbuffers::uoffset_t>(envelope.payload.size() / 4 + 1);
  flatbuffers::Verifier verifier(envelope.payload.data(), envelope.payload.size(), limits);
  if (!fb::VerifyExecutableBuffer(verifier)) {
    return DataLossError("executable fails FlatBuffers verification: the layout is malformed");
  }
  // The builder writes no slack past its first object but alignment
  // padding (under 8 bytes); more is bytes the program does not hold.
  const size_t used = verifier.GetComputedSize();
  if (used + 8 <= envelope.payload.size()) {
    return DataLossError("executable has " + std::to_string(envelope.payload.size() - used) +
                         " bytes past the end of its program");
  }
  const fb::Executable& e = *fb::GetExecutable(envelope.payload.data());
  if (e.format_version() != envelope.format_version) {
    return DataLossError("executable format version differs between envelope and body");
  }
  Program p;
  p.format_version = e.format_version();
  p.key = Str(e.key());
  p.chip = Str(e.chip());
  p.plan = Str(e.plan());
  p.options = Str(e.options());
  if (e.buffers()) {
    for (const fb::Buffer* buf : *e.buffers()) {
      p.buffers.push_back(ProgramBuffer{static_cast<BufferKind>(buf->kind()), Str(buf->shape()),
                                        buf->size_bytes(), buf->offset(),
                                        buf->parameter_number(), Vec(buf->parameter_path()),
                                        Str(buf->literal())});
    }
  }
  if (e.kernels()) {
    for (const fb::Kernel* k : *e.kernels()) p.kernels.push_back(DecodeKernel(*k));
  }
  p.parameters = Vec(e.parameters());
  p.results = Vec(e.results());
  p.result_shape = Str(e.result_shape());
  p.peak_hbm_bytes = e.peak_hbm_bytes();
  p.estimated_seconds = e.estimated_seconds();
  p.compile_ms = e.compile_ms();
  p.topology = Str(e.topology());
  p.replica_count = e.replica_count() == 0 ? 1 : e.replica_count();
  if (e.global_parameter_shapes()) {
    for (const flatbuffers::String* shape : *e.global_parameter_shapes()) p.global_parameter_shapes.push_back(Str(shape));
  }
  if (e.parameter_shardings()) {
    for (const flatbuffers::String* sharding : *e.parameter_shardings()) p.parameter_shardings.push_back(Str(sharding));
  }
  p.global_result_shape = Str(e.global_result_shape());
  p.result_sharding = Str(e.result_sharding());
  KILN_RETURN_IF_ERROR(VerifyProgram(p));
  return p;
}

}  // namespace kiln::runtime
