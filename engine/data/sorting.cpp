// sorting: "7 2 9 2 > 2 2 7 9". Symbols are the numbers 0..symbols-1, so token order is number order.
#include "data/list_task.h"

namespace attnlab {
namespace {

class SortingTask : public ListTask {
 public:
  SortingTask() : ListTask("sorting", Symbols::Numbers, 100) {}

 protected:
  void transform(std::vector<int>& items) const override { std::sort(items.begin(), items.end()); }
};

ATTNLAB_REGISTER(TaskRegistry, "sorting",
                 "x1 .. xn > sorted: write the numbers in ascending order after '>' (answers: the sorted list)",
                 [] { return std::make_unique<SortingTask>(); });

}  // namespace
}  // namespace attnlab
