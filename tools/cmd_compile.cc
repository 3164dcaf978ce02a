// kiln compile FILE [--chip C] [--plan none|heuristic|given] [--scoped-vmem B]
//                   [--topology AxB[xC]] [--out F] [--json] [--explain-fusion]
//                   [--print-module]
// Compiles one HLO text file to an executable; prints a summary (or one JSON
// object, with the fusion decisions) and writes the executable bytes with
// --out. --explain-fusion adds a table of the fusion decisions to the summary;
// --print-module the module as the plan saw it (after kiln's passes: chosen
// layouts, layout copies, simplifications, fused loop bodies), as HLO text.
// --topology compiles the per-chip program of a slice: a module with global
// shapes and shardings is partitioned for it, a partitioned one must have
// been traced for as many chips; the key is the one /v1/compile?topology=
// gives.
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/driver/compile_module.h"
#include "compiler/driver/device_estimate.h"
#include "compiler/driver/module_topology.h"
#include "compiler/driver/prepared_module.h"
#include "compiler/fusion/fusion_decisions.h"
#include "compiler/hlo/printer.h"
#include "runtime/chip/chip_spec.h"
#include "tools/commands.h"
#include "tools/fusion_report.h"
#include "tools/json_error.h"
#include "tools/load_module.h"
#include "tools/module_refinement.h"

namespace kiln::tools {
namespace {

struct CompileArgs {
  std::string file;
  std::string arg_shapes;  // --arg-shapes: refines dynamic dimensions
  std::string chip = kDefaultChip;
  std::string plan = "heuristic";
  int64_t scoped_vmem_bytes = 0;
  std::string topology;
  std::string out;
  bool json = false;
  bool explain_fusion = false;
  bool print_module = false;
};

Status WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return ErrnoError(errno, "cannot open " + path + " for writing");
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f.flush()) return ErrnoError(errno, "write to " + path + " failed");
  return Ok();
}

Status RunCompile(const CompileArgs& args) {
  KILN_ASSIGN_OR_RETURN(auto module, LoadVerifiedModule(args.file));
  KILN_ASSIGN_OR_RETURN(std::vector<hlo::Shape> arg_shapes, ParseArgShapes(args.arg_shapes));
  KILN_ASSIGN_OR_RETURN(DimensionArguments unused_dims, PrepareForCompile(*module, args.file, arg_shapes));
  (void)unused_dims;  // no random inputs here
  KILN_ASSIGN_OR_RETURN(fusion::PlanKind plan, driver::ParsePlanKind(args.plan));
  driver::CompileOptions options;
  options.plan = plan;
  options.chip = args.chip;
  options.scoped_vmem_bytes = args.scoped_vmem_bytes;
  options.topology = args.topology;
  // A module for several devices compiles for its own slice unless told.
  Result<driver::ResolvedTopology> resolved = driver::ResolveTopology(*module, options);
  if (!resolved) return resolved.error().WithContext(args.topology.empty() ? args.file : "--topology");
  // CompileModule in two halves, so that the decisions are named from the
  // module the plan indexes: after the passes, and for a slice the
  // partitioned per-chip program rather than the module as read.
  Result<driver::PreparedModule> prepared = driver::PrepareModule(*module, options);
  if (!prepared) return prepared.error().WithContext(args.file);
  auto out = driver::LowerWithPlan(*prepared, options);
  if (!out) return out.error().WithContext(args.file);
  driver::EstimateDeviceTime(*out);
  if (!args.out.empty()) KILN_RETURN_IF_ERROR(WriteBytes(args.out, out->executable));
  std::vector<fusion::FusionDecision> decisions;  // named only when shown
  if (args.json || args.explain_fusion) {
    decisions = fusion::NameDecisions(*prepared->module->entry(), out->fusion_edges);
  }
  if (args.json) {
    nlohmann::json j = {
        {"key", out->fingerprint.key.Hex()},
        {"chip", out->program.chip},
        {"plan", out->program.plan},
        {"topology", out->program.topology.empty() ? nlohmann::json(nullptr) : nlohmann::json(out->program.topology)},
        {"devices", resolved->devices},
        {"kernels", out->kernels},
        {"fused_instructions", out->fused_instructions},
        {"peak_hbm_bytes", out->peak_hbm_bytes},
        {"estimated_us", out->estimated_us},
        {"estimate_source", out->estimate_source},
        {"cost_model_us", out->cost_model_us},
        {"compile_ms", out->compile_ms},
        {"executable_bytes", out->executable.size()},
        {"fusion_decisions", FusionDecisionsJson(decisions)},
        {"body_fusion_decisions", BodyFusionDecisionsJson(prepared->body_decisions)},
    };
    if (args.print_module) j["module"] = hlo::PrintModule(*prepared->module);
    std::printf("%s\n", j.dump().c_str());
    return Ok();
  }
  std::printf("key            %s\n", out->fingerprint.key.Hex().c_str());
  std::printf("chip           %s\nplan           %s\n", out->program.chip.c_str(),
              out->program.plan.c_str());
  std::printf("topology       %s%s\n", driver::DescribeTopology(options, *resolved).c_str(),
              out->program.topology.empty() ? "" : ": the program of each chip");
  std::printf("kernels        %lld (%lld instructions fused)\n",
              static_cast<long long>(out->kernels), static_cast<long long>(out->fused_instructions));
  std::printf("peak HBM       %llu bytes\n", static_cast<unsigned long long>(out->peak_hbm_bytes));
  const std::string source = out->estimate_source == "simulator"
                                 ? "the timing simulator's, as a run reports it"
                                 : "the cost model's: " + out->estimate_note;
  std::printf("estimated      %.3f us (%s)\n", out->estimated_us, source.c_str());
  std::printf("cost model     %.3f us\n", out->cost_model_us);
  std::printf("compile        %.3f ms\n", out->compile_ms);
  std::printf("executable     %zu bytes%s%s\n", out->executable.size(),
              args.out.empty() ? "" : " -> ", args.out.c_str());
  if (args.explain_fusion) {
    std::printf("\nfusion decisions (%zu)\n%s", decisions.size(),
                FusionDecisionTable(decisions).c_str());
    // Loop bodies and branches, where a scanned model spends most of its
    // time; the `none` and `given` plans leave them as written.
    for (const fusion::BodyDecisions& body : prepared->body_decisions) {
      if (body.decisions.empty()) continue;
      std::printf("\nfusion decisions in %%%s (%zu)\n%s", body.computation.c_str(), body.decisions.size(),
                  FusionDecisionTable(body.decisions).c_str());
    }
  }
  if (args.print_module) {
    std::printf("\nmodule after kiln's passes\n%s", hlo::PrintModule(*prepared->module).c_str());
  }
  return Ok();
}

}  // namespace

void RegisterCompile(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("compile", "Compile an HLO text file to a kiln executable");
  auto args = std::make_shared<CompileArgs>();
  cmd->add_option("file", args->file, "HLO text, StableHLO text or MLIR bytecode file")->required();
  cmd->add_option("--arg-shapes", args->arg_shapes,
                  "Concrete shapes of the entry's parameters (\"s64[],f32[3,4]\"), refining dynamic dimensions");
  cmd->add_option("--chip", args->chip, "Target chip (" + runtime::ChipNamesText() + ")")
      ->check(CLI::IsMember(runtime::ChipNames(), CLI::ignore_case));
  cmd->add_option("--plan", args->plan, "Fusion plan: none, heuristic or given")
      ->check(CLI::IsMember({"none", "heuristic", "given"}));
  cmd->add_option("--scoped-vmem", args->scoped_vmem_bytes,
                  "Scoped VMEM per kernel in bytes (default: the chip's, 16 or 32 MiB)");
  cmd->add_option("--topology", args->topology,
                  "Compile the per-chip program of a slice of this shape, e.g. 2x4 or 2x2x1");
  cmd->add_option("--out", args->out, "Write the executable here");
  cmd->add_flag("--json", args->json, "Print one JSON object (with fusion_decisions)");
  cmd->add_flag("--explain-fusion", args->explain_fusion,
                "Also print every fusion decision: fused or not, legality or profitability, why");
  cmd->add_flag("--print-module", args->print_module,
                "Also print the module the plan was made for: after kiln's passes (chosen layouts, layout "
                "copies, simplifications, fused loop bodies), as HLO text");
  cmd->callback([args, exit_code] {
    if (Status s = RunCompile(*args); !s) {
      ReportFailure("compile", s.error(), args->json);
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
