// Freed large blocks stay in the heap for the next allocation (core/heap_reuse.h): after the first
// cycle, allocating, filling and freeing a 64 MB matrix again page-faults nothing, where glibc's
// own settings map it afresh from the kernel each time (16 k faults of 4 KiB pages per cycle).
#include <QtTest>
#include <sys/resource.h>

#include "core/heap_reuse.h"
#include "core/tensor.h"

using namespace attnlab;

namespace {

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Faults over `cycles` allocations of a rows x cols matrix, each filled and freed, after one cycle
// that warms the heap.
long faultsOfRepeatedAllocations(Eigen::Index rows, Eigen::Index cols, int cycles) {
  float checksum = 0;
  auto cycle = [&] {
    Mat m = Mat::Constant(rows, cols, 1.0f);
    checksum += m(rows - 1, cols - 1);
  };
  cycle();
  const long before = minorFaults();
  for (int i = 0; i < cycles; ++i) cycle();
  const long faults = minorFaults() - before;
  if (checksum != cycles + 1) qFatal("the matrices were not filled");
  return faults;
}

}  // namespace

class HeapReuseTest : public QObject {
  Q_OBJECT
 private slots:
  void aFreedLargeBlockIsReusedWithoutPageFaults() {
    if (!keepFreedBlocksForReuse()) QSKIP("this C library (or a sanitizer's allocator) has no such setting");
    const Eigen::Index rows = 512, cols = 32768;  // 64 MiB, above glibc's largest automatic mmap threshold
    const long faults = faultsOfRepeatedAllocations(rows, cols, 5);
    QVERIFY2(faults < 50, qPrintable(QString("%1 page faults over 5 reused 64 MiB blocks").arg(faults)));
  }
};

QTEST_GUILESS_MAIN(HeapReuseTest)
#include "test_heap_reuse.moc"
