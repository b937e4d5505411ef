// Every registered member of every family has a one-line summary and an entry in the user guide
// (a table row "| name |" or the name in code quotes), so a member is documented the moment it
// registers. Each family's behaviour tests iterate the same registries.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "analysis/analysis.h"
#include "attention/attention.h"
#include "data/task.h"
#include "hf/architecture.h"
#include "interpret/interpretation.h"
#include "kv/eviction_policy.h"
#include "positional/positional.h"
#include "tokenizer/tokenizer.h"

using namespace attnlab;

namespace {

std::string guideText() {
  std::ifstream in(ATTNLAB_GUIDE);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool documents(const std::string& guide, const std::string& name) {
  for (const std::string& form : {"| " + name + " |", "`" + name + "`", "**" + name + "**"})
    if (guide.find(form) != std::string::npos) return true;
  return false;
}

template <class R>
QStringList undocumented(const std::string& guide, const char* family) {
  QStringList missing;
  for (const auto& e : R::instance().entries()) {
    if (e.summary.empty()) missing << QString("%1 %2 has no summary").arg(family, QString::fromStdString(e.name));
    if (!documents(guide, e.name)) missing << QString("%1 %2 is not in the guide").arg(family, QString::fromStdString(e.name));
  }
  return missing;
}

}  // namespace

class TestRegistriesDocumented : public QObject {
  Q_OBJECT

 private slots:
  void everyMemberHasASummaryAndAGuideEntry() {
    const std::string guide = guideText();
    QVERIFY2(guide.size() > 10000, ATTNLAB_GUIDE " is missing or short");
    QStringList missing;
    missing << undocumented<AttentionRegistry>(guide, "attention variant");
    missing << undocumented<PositionalRegistry>(guide, "positional encoding");
    missing << undocumented<EvictionPolicyRegistry>(guide, "eviction policy");
    missing << undocumented<TaskRegistry>(guide, "task");
    missing << undocumented<AnalysisRegistry>(guide, "analysis");
    missing << undocumented<InterpretationRegistry>(guide, "interpretation");
    missing << undocumented<hf::ArchitectureRegistry>(guide, "architecture");
    missing << undocumented<TokenizerRegistry>(guide, "tokenizer");
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join("\n")));
  }

  // The check itself: a name the guide does not hold is reported.
  void anUnknownNameIsReported() {
    const std::string guide = guideText();
    QVERIFY(documents(guide, "softmax"));
    QVERIFY(!documents(guide, "no_such_member_anywhere"));
  }
};

QTEST_MAIN(TestRegistriesDocumented)
#include "test_registries_documented.moc"
