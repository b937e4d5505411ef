// copy: "a c b > a c b".
#include "data/list_task.h"

namespace attnlab {
namespace {

class CopyTask : public ListTask {
 public:
  CopyTask() : ListTask("copy", Symbols::Letters, 52) {}

 protected:
  void transform(std::vector<int>&) const override {}
};

ATTNLAB_REGISTER(TaskRegistry, "copy", "x1 .. xn > x1 .. xn: repeat the list after '>' (answers: the repeat)",
                 [] { return std::make_unique<CopyTask>(); });

}  // namespace
}  // namespace attnlab
