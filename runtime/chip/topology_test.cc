// Slice topologies: parsing, wraparound per chip kind, device placement and
// the errors for bad strings.
#include "runtime/chip/topology.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::runtime {
namespace {

const ChipSpec& Chip(const char* name) {
  const ChipSpec* chip = FindChip(name);
  EXPECT_NE(chip, nullptr) << name;
  return *chip;
}

Topology Parse(const char* text, const char* chip) {
  auto t = ParseTopology(text, Chip(chip));
  EXPECT_TRUE(t) << text << " on " << chip << ": " << (t ? "" : t.error().message);
  return t ? *t : Topology{};
}

std::string ErrorOf(const char* text, const char* chip) {
  auto t = ParseTopology(text, Chip(chip));
  EXPECT_FALSE(t) << text << " on " << chip << " should be refused";
  return t ? "" : t.error().message;
}

TEST(TopologyTest, ParsesAxesAndCountsChips) {
  Topology t = Parse("2x4", "v5e");
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(t.chips(), 8);
  EXPECT_EQ(t.ToString(), "2x4");
  Topology cube = Parse("4x4x8", "v5p");
  EXPECT_EQ(cube.dims, (std::vector<int64_t>{4, 4, 8}));
  EXPECT_EQ(cube.chips(), 128);
  EXPECT_EQ(Parse("2x2x1", "v4").chips(), 4);
}

TEST(TopologyTest, V5eWrapsOnlyAFullSixteenAxis) {
  EXPECT_EQ(Parse("4x4", "v5e").wraps, (std::vector<bool>{false, false}));
  EXPECT_EQ(Parse("8x16", "v5e").wraps, (std::vector<bool>{false, true}));
  EXPECT_EQ(Parse("16x16", "v6e").wraps, (std::vector<bool>{true, true}));
}

TEST(TopologyTest, V5pWrapsEveryAxisOfWholeCubesAndNoneOtherwise) {
  EXPECT_EQ(Parse("4x4x4", "v5p").wraps, (std::vector<bool>{true, true, true}));
  EXPECT_EQ(Parse("4x4x8", "v5p").wraps, (std::vector<bool>{true, true, true}));
  EXPECT_EQ(Parse("2x4x4", "v5p").wraps, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(Parse("2x2x1", "v4").wraps, (std::vector<bool>{false, false, false}));
}

TEST(TopologyTest, FirstAxisVariesFastestAsJaxDevicesListsThem) {
  Topology t = Parse("2x4", "v5e");
  EXPECT_EQ(t.Coordinates(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(t.Coordinates(1), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(t.Coordinates(2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(t.Coordinates(7), (std::vector<int64_t>{1, 3}));
  Topology cube = Parse("2x2x2", "v5p");
  EXPECT_EQ(cube.Coordinates(4), (std::vector<int64_t>{0, 0, 1}));
  for (int64_t d = 0; d < cube.chips(); ++d) EXPECT_EQ(cube.DeviceAt(cube.Coordinates(d)), d);
}

TEST(TopologyTest, SingleChipHasTheChipsDimensionality) {
  EXPECT_EQ(SingleChip(Chip("v5e")).ToString(), "1x1");
  EXPECT_EQ(SingleChip(Chip("v5p")).ToString(), "1x1x1");
  EXPECT_EQ(SingleChip(Chip("v5p")).chips(), 1);
}

TEST(TopologyTest, BadStringsSayWhy) {
  EXPECT_NE(ErrorOf("3x", "v5e").find("'' is not a chip count"), std::string::npos);
  EXPECT_NE(ErrorOf("", "v5e").find("not a chip count"), std::string::npos);
  EXPECT_NE(ErrorOf("2by4", "v5e").find("'2by4' is not a chip count"), std::string::npos);
  EXPECT_NE(ErrorOf("-2x4", "v5e").find("at least one chip"), std::string::npos);
  EXPECT_NE(ErrorOf("0x4", "v5e").find("at least one chip"), std::string::npos);
  EXPECT_NE(ErrorOf("2x2x1", "v5e").find("v5e slices are 2D"), std::string::npos);
  EXPECT_NE(ErrorOf("2x4", "v5p").find("v5p slices are 3D"), std::string::npos);
  EXPECT_NE(ErrorOf("1x2x3x4", "v5p").find("more than 3 axes"), std::string::npos);
  EXPECT_NE(ErrorOf("32x8", "v5e").find("at most 16 wide"), std::string::npos);
  EXPECT_NE(ErrorOf("16x16x32", "v4").find("at most 16 wide"), std::string::npos);
  EXPECT_NE(ErrorOf("28x28x28", "v5p").find("pod holds 8960"), std::string::npos);
  EXPECT_NE(ErrorOf("99999999999x2", "v5e").find("longer than any pod"), std::string::npos);
  // The error names the string and the chip.
  EXPECT_NE(ErrorOf("0x4", "v6e").find("bad topology '0x4' for v6e"), std::string::npos);
}

TEST(TopologyTest, CompactSliceKeepsTheLongestAxisShort) {
  auto slice = [](int64_t chips, const char* kind) {
    Result<Topology> t = CompactSlice(chips, *FindChip(kind));
    return t ? t->ToString() : t.error().message;
  };
  EXPECT_EQ(slice(1, "v5e"), "1x1");
  EXPECT_EQ(slice(8, "v5e"), "2x4");
  EXPECT_EQ(slice(256, "v5e"), "16x16");
  EXPECT_EQ(slice(8, "v5p"), "2x2x2");
  EXPECT_EQ(slice(128, "v5p"), "4x4x8");
  EXPECT_EQ(slice(512, "v5p"), "8x8x8");
  EXPECT_EQ(slice(6, "v5p"), "1x2x3");
  EXPECT_EQ(slice(512, "v5e"), "no v5e slice holds 512 chips (a pod holds 256, at most 16 along an axis)");
  EXPECT_EQ(slice(17, "v5e"), "no v5e slice holds 17 chips (a pod holds 256, at most 16 along an axis)");
  EXPECT_FALSE(CompactSlice(0, *FindChip("v5e")));
}

TEST(TopologyTest, TorusShapeMatchesTheChipsLinks) {
  // A 2D torus needs 4 links per chip, a 3D torus 6.
  for (const ChipSpec& chip : AllChips()) {
    EXPECT_EQ(chip.ici_links, 2 * chip.torus_dims) << chip.name;
    EXPECT_GT(chip.ici_bytes_per_s, 0) << chip.name;
    EXPECT_GT(chip.ici_hop_latency_s, 0) << chip.name;
    EXPECT_TRUE(ParseTopology(SingleChip(chip).ToString(), chip)) << chip.name;
  }
}

}  // namespace
}  // namespace kiln::runtime
