// Literal storage: large blocks come from the mapped block cache. Under
// AddressSanitizer (scripts/sanitize_tests.sh) reading past the end of a
// large literal, or a released block waiting in the cache, is reported as it
// is for operator new's blocks; elsewhere the reuse path is checked.
#include <gtest/gtest.h>

#include <cstdint>

#include "compiler/hlo/literal.h"

namespace kiln::hlo {
namespace {

// Bytes of a literal above the large-block threshold and off the cache's
// 2 MiB granule, so a tail of its block lies beyond the literal.
constexpr int64_t kLargeBytes = int64_t{kLiteralLargeBlockBytes} + 4096 + 1;

TEST(LiteralStorageTest, LargeBlocksAreZeroFilledAndReused) {
  const Shape shape(PrimitiveType::kU8, {kLargeBytes});
  const uint8_t* first_data = nullptr;
  {
    Literal first(shape);
    first_data = first.data().data();
    first.mutable_data()[kLargeBytes - 1] = 7;
  }
  Literal second(shape);  // the same size class: the cached block comes back
  EXPECT_EQ(second.data().data(), first_data);
  EXPECT_EQ(second.data()[kLargeBytes - 1], 0);
  EXPECT_EQ(static_cast<int64_t>(second.data().size()), kLargeBytes);
}

#if defined(__SANITIZE_ADDRESS__)
uint8_t ReadByte(const uint8_t* p) { return *static_cast<const volatile uint8_t*>(p); }

TEST(LiteralStorageDeathTest, ReadPastALargeLiteralIsReported) {
  EXPECT_DEATH(
      {
        Literal lit(Shape(PrimitiveType::kU8, {kLargeBytes}));
        ReadByte(lit.data().data() + kLargeBytes);
      },
      "AddressSanitizer");
}

TEST(LiteralStorageDeathTest, ReadOfAReleasedLargeBlockIsReported) {
  EXPECT_DEATH(
      {
        const uint8_t* stale = nullptr;
        {
          Literal lit(Shape(PrimitiveType::kU8, {kLargeBytes}));
          stale = lit.data().data();
        }
        ReadByte(stale);
      },
      "AddressSanitizer");
}
#endif

}  // namespace
}  // namespace kiln::hlo
