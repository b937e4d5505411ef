// reverse: "a c b > b c a".
#include "data/list_task.h"

namespace attnlab {
namespace {

class ReverseTask : public ListTask {
 public:
  ReverseTask() : ListTask("reverse", Symbols::Letters, 52) {}

 protected:
  void transform(std::vector<int>& items) const override { std::reverse(items.begin(), items.end()); }
};

ATTNLAB_REGISTER(TaskRegistry, "reverse",
                 "x1 .. xn > xn .. x1: write the list backwards after '>' (answers: that list)",
                 [] { return std::make_unique<ReverseTask>(); });

}  // namespace
}  // namespace attnlab
