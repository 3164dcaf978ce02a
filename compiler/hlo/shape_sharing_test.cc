// Shapes share their storage between copies (shape.h): a copy reads the
// same dimensions, a change to one copy never shows in another, and a shape
// assigned from inside itself keeps the value.
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "compiler/hlo/shape.h"

namespace kiln::hlo {
namespace {

TEST(ShapeSharingTest, ACopyReadsTheSameStorageUntilOneOfThemChanges) {
  Shape original(PrimitiveType::kF32, {2, 3});
  Shape copy = original;
  EXPECT_EQ(&copy.dimensions(), &original.dimensions());
  EXPECT_EQ(copy, original);

  copy.set_dimensions({4});
  EXPECT_EQ(original.dimensions(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(copy.dimensions(), (std::vector<int64_t>{4}));

  Shape relaid = original;
  relaid.mutable_layout().minor_to_major = {0, 1};
  EXPECT_EQ(original.layout().minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_NE(relaid, original);
  EXPECT_TRUE(relaid.Compatible(original));

  Shape retyped = original;
  retyped.set_element_type(PrimitiveType::kBF16);
  retyped.set_dynamic_dimension(1, true);
  EXPECT_EQ(original.element_type(), PrimitiveType::kF32);
  EXPECT_FALSE(original.is_dynamic_dimension(1));
  EXPECT_EQ(original.ToString(), "f32[2,3]");
  EXPECT_EQ(retyped.ToString(), "bf16[2,<=3]");
}

TEST(ShapeSharingTest, ChangingATupleCopyLeavesTheOriginalsElements) {
  Shape tuple = Shape::Tuple({Shape(PrimitiveType::kS32, {}), Shape(PrimitiveType::kF32, {8})});
  Shape copy = tuple;
  copy.mutable_tuple_shapes()[1].set_dimensions({9});
  EXPECT_EQ(tuple.tuple_shapes(1).dimensions(), (std::vector<int64_t>{8}));
  EXPECT_EQ(copy.ToString(), "(s32[], f32[9])");
}

TEST(ShapeSharingTest, AShapeAssignedFromItsOwnElementKeepsThatElement) {
  Shape tuple = Shape::Tuple({Shape(PrimitiveType::kF32, {2}), Shape(PrimitiveType::kS8, {3, 4})});
  tuple = tuple.tuple_shapes(1);
  EXPECT_EQ(tuple.ToString(), "s8[3,4]");

  Shape nested = Shape::Tuple({Shape::Tuple({Shape(PrimitiveType::kU8, {5})})});
  nested = std::move(nested.mutable_tuple_shapes()[0]);
  EXPECT_EQ(nested.ToString(), "(u8[5])");
}

TEST(ShapeSharingTest, ADefaultShapeReadsAsEmptyAndEqualsAnother) {
  Shape none;
  EXPECT_EQ(none.element_type(), PrimitiveType::kInvalid);
  EXPECT_EQ(none.rank(), 0);
  EXPECT_TRUE(none.dimensions().empty());
  EXPECT_TRUE(none.tuple_shapes().empty());
  EXPECT_TRUE(none.layout().IsPlain());
  EXPECT_EQ(none, Shape());
  Shape moved_from(PrimitiveType::kF32, {1});
  Shape taken = std::move(moved_from);
  EXPECT_EQ(taken.ToString(), "f32[1]");
}

// Copies made and dropped on several threads at once, each thread then
// changing its own copy: the count stays exact (ASan reports a double free
// or a leak otherwise) and no thread sees another's change.
TEST(ShapeSharingTest, CopiesOnManyThreadsCountTheirOwners) {
  const Shape shared(PrimitiveType::kBF16, {128, 256});
  std::vector<std::thread> threads;
  std::vector<char> kept(4, 0);  // one byte per thread: no shared bits
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared, &kept, t] {
      std::vector<Shape> copies;
      for (int i = 0; i < 20000; ++i) {
        copies.push_back(shared);
        if (copies.size() > 64) copies.clear();
      }
      Shape own = shared;
      own.set_dimensions({t + 1});
      kept[t] = own.dimensions() == std::vector<int64_t>{t + 1} &&
                shared.dimensions() == std::vector<int64_t>{128, 256};
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(kept[t]) << "thread " << t;
  EXPECT_EQ(shared.ToString(), "bf16[128,256]");
}

}  // namespace
}  // namespace kiln::hlo
