#include <cstdio>
#include <fstream>
#include <sstream>
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
int main(int argc, char** argv) {
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    std::stringstream ss; ss << f.rdbuf();
    std::string text = ss.str();
    auto m = kiln::hlo::ParseModule(text, argv[i]);
    if (!m) { printf("%s\n", m.error().message.c_str()); ++bad; continue; }
    std::string p = kiln::hlo::PrintModule(**m);
    auto m2 = kiln::hlo::ParseModule(p, "printed");
    if (!m2) { printf("REPARSE %s: %s\n", argv[i], m2.error().message.c_str()); ++bad; continue; }
    if (kiln::hlo::PrintModule(**m2) != p) { printf("NOTFIXED %s\n", argv[i]); ++bad; }
  }
  printf("bad=%d\n", bad);
}
