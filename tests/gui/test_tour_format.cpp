// The tour format: expressions, number templates, the tour file parser's errors (file, line,
// reason), and the live numbers computed from a real (tiny) run.
#include <QSignalSpy>
#include <QTest>
#include <cmath>

#include "tiny_experiment.h"
#include "tour_expression.h"
#include "tour_file.h"
#include "tour_numbers.h"
#include "training_session.h"

using namespace attnlab;

class TestTourFormat : public QObject {
  Q_OBJECT
 private slots:
  void expressionsFollowPrecedence() {
    TourExpression e;
    QCOMPARE(QString::fromStdString(TourExpression::parse("1 + 2 * 3 - 4 / 2", e)), QString());
    QCOMPARE(e.evaluate({}), 5.0);
    QVERIFY(TourExpression::parse("-(1 + 2) * 2 < -5 and not 0 or 0", e).empty());
    QCOMPARE(e.evaluate({}), 1.0);
    QVERIFY(TourExpression::parse("2 >= 3 || 1 != 1", e).empty());
    QCOMPARE(e.evaluate({}), 0.0);
    QVERIFY(TourExpression::parse("!(1 == 1)", e).empty());
    QCOMPARE(e.evaluate({}), 0.0);
  }

  void callsAreLookedUpByKey() {
    TourExpression e;
    QVERIFY(TourExpression::parse("induction(2, 1) > 0.3 and step >= 200", e).empty());
    QCOMPARE(e.calls().size(), size_t(2));
    QCOMPARE(QString::fromStdString(e.calls()[0].key()), QStringLiteral("induction(2,1)"));
    QVERIFY(e.holds({{"induction(2,1)", 0.5}, {"step", 200}}));
    QVERIFY(!e.holds({{"induction(2,1)", 0.2}, {"step", 200}}));
    // An unknown number decides nothing: the condition does not hold, and "not" keeps it unknown.
    QVERIFY(!e.holds({{"step", 200}}));
    QVERIFY(TourExpression::parse("not order", e).empty());  // "order" is a name, not "or" + "der"
    QVERIFY(std::isnan(e.evaluate({})));
    QVERIFY(TourExpression::parse("kv_ppl(streaming_llm, 25%) / kv_ppl('full', 0)", e).empty());
    QCOMPARE(QString::fromStdString(e.calls()[0].key()), QStringLiteral("kv_ppl(streaming_llm,25%)"));
    QCOMPARE(QString::fromStdString(e.calls()[1].key()), QStringLiteral("kv_ppl(full,0)"));
    QCOMPARE(e.evaluate({{"kv_ppl(streaming_llm,25%)", 6}, {"kv_ppl(full,0)", 4}}), 1.5);
  }

  void badExpressionsSayWhere() {
    TourExpression e;
    QCOMPARE(QString::fromStdString(TourExpression::parse("induction(2,1 > 3", e)),
             QStringLiteral("at column 15: expected ')' after the arguments of induction"));
    QCOMPARE(QString::fromStdString(TourExpression::parse("1 +", e)), QStringLiteral("at column 4: expected a number or a name"));
    QCOMPARE(QString::fromStdString(TourExpression::parse("1 2", e)), QStringLiteral("at column 3: unexpected '2'"));
    QCOMPARE(QString::fromStdString(TourExpression::parse("step > inducton(1,1)", e, checkTourCall)),
             QStringLiteral("at column 8: unknown number 'inducton' (the user guide lists them)"));
    QCOMPARE(QString::fromStdString(TourExpression::parse("induction(1)", e, checkTourCall)),
             QStringLiteral("at column 1: 'induction' takes 2 argument(s): induction(L, H)"));
  }

  void templatesFormatNumbers() {
    TourTemplate t;
    QVERIFY(TourTemplate::parse("score {induction(2,1):.2f}, {share:%}, {share:.2%}, step {step}, {x}, {n:d} {{braces}}", t, {}).empty());
    QCOMPARE(QString::fromStdString(t.render({{"induction(2,1)", 0.4567}, {"share", 0.25}, {"step", 200}, {"x", 0.0123456}, {"n", 2.6}})),
             QStringLiteral("score 0.46, 25.0%, 25.00%, step 200, 0.0123, 3 {braces}"));
    QCOMPARE(QString::fromStdString(t.render({})), QStringLiteral("score n/a, n/a, n/a, step n/a, n/a, n/a {braces}"));
    QCOMPARE(t.calls().size(), size_t(6));
    QCOMPARE(QString::fromStdString(TourTemplate::parse("a {step", t)), QStringLiteral("column 3: '{' is never closed (write '{{' for a brace)"));
    QCOMPARE(QString::fromStdString(TourTemplate::parse("a {step:.2x}", t)), QStringLiteral("column 3: unknown format ':.2x' (use .2f, %, .1%, d)"));
    QCOMPARE(QString::fromStdString(TourTemplate::parse("{steps}", t, checkTourCall)),
             QStringLiteral("column 1: in {steps}: at column 1: unknown number 'steps' (the user guide lists them)"));
  }

  void parsesATour() {
    const std::string text =
        "# A tour\n"
        "@summary What it is.\n"
        "@duration 1 minute\n"
        "// a comment\n"
        "## First step\n"
        "Some *Markdown*, step {step}.\n"
        "@preset induction\n"
        "@set train.steps=300\n"
        "@train-until 300 induction(2,1) > 0.3\n"
        "@select 2 1\n"
        "@view attention\n"
        "@kv streaming_llm 8\n"
        "@highlight heatmap Look here\n"
        "@predict Which key?\n"
        "@choice This one\n"
        "@choice That one\n"
        "@answer 2\n"
        "@reveal It was that one: {weight(2,1,3,1):.2f}.\n"
        "@check induction(2,1) > 0.3\n"
        "@pass Formed: {induction(2,1):.2f}.\n"
        "@fail Not yet.\n"
        "\n"
        "## Second\n"
        "@train 100\n"
        "More text.\n";
    Tour tour;
    QCOMPARE(QString::fromStdString(parseTour(text, "a", "a.tour", tour, {"attention", "kv"})), QString());
    QCOMPARE(QString::fromStdString(tour.title), QStringLiteral("A tour"));
    QCOMPARE(tour.steps.size(), size_t(2));
    const TourStep& s = tour.steps[0];
    QCOMPARE(s.line, 5);
    QCOMPARE(s.actions.size(), size_t(7));
    QCOMPARE(int(s.actions[2].kind), int(TourAction::Kind::TrainUntil));
    QCOMPARE(s.actions[2].steps, 300);
    QCOMPARE(s.actions[3].layer, 2);
    QCOMPARE(QString::fromStdString(s.actions[5].detail), QStringLiteral("8"));
    QCOMPARE(QString::fromStdString(s.actions[6].detail), QStringLiteral("Look here"));
    QCOMPARE(s.choices.size(), size_t(2));
    QCOMPARE(s.answer, 2);
    QCOMPARE(s.checks.size(), size_t(1));
    QCOMPARE(QString::fromStdString(s.checks[0].pass.render({{"induction(2,1)", 0.5}})), QStringLiteral("Formed: 0.50."));
    QCOMPARE(QString::fromStdString(s.text.render({{"step", 7}})), QStringLiteral("Some *Markdown*, step 7."));
    QCOMPARE(s.calls().size(), size_t(5));  // step, condition, reveal's weight, check, pass
    QCOMPARE(QString::fromStdString(tour.steps[1].text.render({})), QStringLiteral("More text."));
  }

  void refusesMalformedToursWithFileLineAndReason() {
    const std::string head = "# T\n@summary s\n## Step\n";
    const std::vector<std::pair<std::string, QString>> cases = {
        {"", "x.tour:1: the file is empty"},
        {"Title without hash\n", "x.tour:1: a tour starts with its title: '# Title'"},
        {"# T\n## Step\n", "x.tour:1: the tour needs '@summary ...' in its header"},
        {"# T\n@summary s\n", "x.tour:2: the tour has no steps ('## Step title')"},
        {"# T\n@sumary s\n## S\n", "x.tour:2: unknown header line '@sumary' (summary, duration, short-note, short-set, order)"},
        {head + "@preset nosuch\n", "x.tour:4: unknown preset \"nosuch\""},
        {head + "@train many\n", "x.tour:4: @train needs the step to train to, a positive whole number"},
        {head + "@train 50 short 60\n", "x.tour:4: @train needs the step to train to"},  // short is at most the whole
        {head + "@train-until 50 short\n", "x.tour:4: @train-until needs the most steps and a condition"},
        {"# T\n@summary s\n@short-set model.nosuch=1\n## S\n", "x.tour:3: in @short-set: "},
        {head + "@train 60 short 20\n", "x.tour:1: the tour has a short variant (@short-set or 'short N'), so its header needs '@short-note"},
        {"# T\n@summary s\n@short-note n\n## S\n@train 60\n", "x.tour:1: @short-note describes a short variant, but no"},
        {head + "@view nowhere\n", "x.tour:4: unknown view 'nowhere' (attention, kv)"},
        {head + "text\n@check induction(1 1)\n", "x.tour:5: in @check: at column 13: expected ')' after the arguments of induction"},
        {head + "@select 2\n", "x.tour:4: @select needs a layer and a head: '@select 2 1'"},
        {head + "@predict Q?\n@choice a\n@choice b\n", "x.tour:3: @predict needs @answer N with N from 1 to 2"},
        {head + "@pass fine\n", "x.tour:4: @pass comes after a @check"},
        {head + "@frobnicate\n", ""},
        {head + "@keep 2bad step\n", "x.tour:4: @keep needs a name and an expression"},
        {head + "@check kept(loss) > 1\n", "x.tour:3: kept(loss) names no number an earlier step keeps (@keep loss ...)"},
        {head + "@keep loss val_loss\n@check kept(loss) > 1\n", "x.tour:3: kept(loss) names no number an earlier step keeps"},
        {head + "Score {induction(1)}\n", "x.tour:3: in the text of step \"Step\": column 7: in {induction(1)}: at column 1: 'induction' takes 2 argument(s): induction(L, H)"},
    };
    for (const auto& [text, expected] : cases) {
      Tour tour;
      tour.title = "untouched";
      const QString why = QString::fromStdString(parseTour(text, "x", "x.tour", tour, {"attention", "kv"}));
      if (expected.isEmpty()) QVERIFY2(why.startsWith("x.tour:4: unknown line '@frobnicate'"), qPrintable(why));
      else QVERIFY2(why.startsWith(expected), qPrintable(why));  // the preset message goes on to list them
      QCOMPARE(QString::fromStdString(tour.title), QStringLiteral("untouched"));  // nothing half-parsed is handed out
    }
  }

  // The short variant (what ctest runs): its step counts, and its settings applied after each
  // step's own @preset / @set lines; the whole tour is untouched.
  void shortVariantIsWhatTheFileStates() {
    const std::string text =
        "# T\n@summary s\n@short-note Fewer steps and a smaller batch.\n@short-set train.batch=4\n"
        "## One\n@preset induction\n@set train.batch=32\n@train 150 short 60\n@view training\n"
        "## Two\n@set model.positional=rope\n@train-until 400 short 100 best_induction > 0.5\n"
        "## Three\n@train 200\n";
    Tour tour;
    QCOMPARE(QString::fromStdString(parseTour(text, "t", "t.tour", tour)), QString());
    QVERIFY(tour.hasShortVariant());
    QCOMPARE(tour.steps[0].actions[2].steps, 150);
    QCOMPARE(tour.steps[0].actions[2].shortSteps, 60);
    QCOMPARE(QString::fromStdString(tour.steps[1].actions[1].condition.text()), QStringLiteral("best_induction > 0.5"));
    const Tour brief = shortVariant(tour);
    using Kind = TourAction::Kind;
    QCOMPARE(brief.steps[0].actions.size(), size_t(5));  // preset, set, the short set, train, view
    QCOMPARE(int(brief.steps[0].actions[2].kind), int(Kind::Set));
    QCOMPARE(QString::fromStdString(brief.steps[0].actions[2].text), QStringLiteral("train.batch=4"));
    QCOMPARE(brief.steps[0].actions[3].steps, 60);
    QCOMPARE(QString::fromStdString(brief.steps[1].actions[1].text), QStringLiteral("train.batch=4"));
    QCOMPARE(brief.steps[1].actions[2].steps, 100);
    QCOMPARE(brief.steps[2].actions.size(), size_t(1));  // no experiment opened: nothing to add
    QCOMPARE(brief.steps[2].actions[0].steps, 200);      // no short count: the whole one
    QCOMPARE(tour.steps[0].actions.size(), size_t(4));
    Tour plain;
    QCOMPARE(QString::fromStdString(parseTour("# T\n@summary s\n## One\n@train 10\n", "p", "p.tour", plain)), QString());
    QVERIFY(!plain.hasShortVariant());
    QCOMPARE(shortVariant(plain).steps[0].actions[0].steps, 10);
  }

  // A number kept by one step is read by a later one.
  void keptNumbersReachLaterSteps() {
    Tour tour;
    const std::string text = "# T\n@summary s\n## One\n@keep base val_loss * 2\n## Two\nBefore: {kept(base):.1f}.\n";
    QCOMPARE(QString::fromStdString(parseTour(text, "t", "t.tour", tour)), QString());
    QCOMPARE(tour.steps[0].keeps.size(), size_t(1));
    QCOMPARE(tour.steps[0].keeps[0].expression.evaluate({{"val_loss", 1.5}}), 3.0);
    QCOMPARE(tour.steps[0].calls().size(), size_t(1));  // the keep's val_loss is measured with the step
    TourRunState state;
    state.kept["base"] = 3.0;
    QVERIFY(!computeTourNumbers(tour.steps[1].calls(), state).count("kept(base)"));  // no run yet: nothing is computed
  }

  // The numbers of a real run, from its trace and model snapshot.
  void computesLiveNumbersFromARun() {
    ExperimentConfig config = testing::tinyConfig(6);
    QVERIFY(applyOverride(config, "model.positional=none").empty());
    TrainingSession session;
    std::shared_ptr<const TraceSnapshot> last;
    connect(&session, &TrainingSession::traced, this, [&](const auto& trace) { last = trace; });
    session.start(config);
    QTRY_VERIFY_WITH_TIMEOUT(last && last->step == 6 && session.state() == TrainingSession::State::Finished, 60000);

    TourRunState state;
    state.trace = last;
    state.hasProgress = true;
    state.progress.step = 6;
    state.selectedLayer = 1;
    std::vector<TourCall> calls;
    TourExpression e;
    const char* wanted =
        "row_sum(1,2,4) + weight(1,1,3,2) + score(2,1,5,2) + qk_score(2,1,5,2) + top_key(1,1,4) + visible_keys(2,2,5) + "
        "zero_weights(1,1) + induction(2,1) + best_induction + best_induction_layer + prev_token(1,2) + ablation(1,1) + "
        "most_important_layer + drop_metric(descending,4) + kv_ppl(full,0) + kv_ppl(window,4) + kv_live_share(window,4) + "
        "layer + step + best_sink + mean_sink + uniform_sink + qk_radius_over_null(1,1) + qk_imaginary_share(1,2) + "
        "rope_rotational_share(1,1) + length_loss(2) + length_reaches(2) + absent_token_change + absent_token_weight + "
        "parameters + train_length + kept(base) + score(1,1,2,3)";
    state.kept["base"] = 0.25;
    QCOMPARE(QString::fromStdString(TourExpression::parse(wanted, e, checkTourCall)), QString());
    const TourNumbers n = computeTourNumbers(e.calls(), state);
    const HeadTrace& h21 = last->trace.layers[1].heads[0];
    QVERIFY(std::fabs(n.at("row_sum(1,2,4)") - 1) < 1e-5);
    QCOMPARE(n.at("weight(1,1,3,2)"), double(last->trace.layers[0].heads[0].weights(2, 1)));
    QCOMPARE(n.at("score(2,1,5,2)"), double(h21.scores(4, 1)));
    QVERIFY(std::fabs(n.at("qk_score(2,1,5,2)") - n.at("score(2,1,5,2)")) < 1e-4);  // no positional bias under NoPE
    QVERIFY(n.at("top_key(1,1,4)") >= 1 && n.at("top_key(1,1,4)") <= 4);
    QCOMPARE(n.at("visible_keys(2,2,5)"), 5.0);  // causal: keys 1..5
    QCOMPARE(n.at("zero_weights(1,1)"), 0.0);     // softmax in fp32 gives no exact zeros here
    QVERIFY(n.at("induction(2,1)") >= 0 && n.at("induction(2,1)") <= 1);
    QVERIFY(n.at("best_induction") >= n.at("induction(2,1)"));
    QVERIFY(n.at("best_induction_layer") >= 1 && n.at("best_induction_layer") <= 2);
    QVERIFY(std::isfinite(n.at("ablation(1,1)")));
    QVERIFY(n.at("most_important_layer") >= 1);
    QVERIFY(std::isfinite(n.at("drop_metric(descending,4)")));
    QVERIFY(n.at("kv_ppl(full,0)") > 1);
    QCOMPARE(n.at("kv_live_share(full,0)"), 1.0);
    QVERIFY(n.at("kv_live_share(window,4)") < 1);
    QCOMPARE(n.at("layer"), 2.0);
    QCOMPARE(n.at("step"), 6.0);
    QVERIFY(n.at("best_sink") >= n.at("mean_sink") && n.at("mean_sink") > 0);
    double harmonic = 0;  // an even spread gives 1/n to the first of n keys
    for (int t = 1; t <= n.at("train_length"); ++t) harmonic += 1.0 / t;
    QVERIFY(std::fabs(n.at("uniform_sink") - harmonic / n.at("train_length")) < 1e-12);
    QVERIFY(n.at("qk_radius_over_null(1,1)") > 0.3 && n.at("qk_radius_over_null(1,1)") < 3);  // 6 steps: near the null
    QVERIFY(n.at("qk_imaginary_share(1,2)") >= 0 && n.at("qk_imaginary_share(1,2)") <= 1);
    QVERIFY(!n.count("rope_rotational_share(1,1)") || std::isnan(n.at("rope_rotational_share(1,1)")));  // no RoPE
    QVERIFY(n.at("length_loss(2)") > 0);  // no positions: any length runs
    QCOMPARE(n.at("length_reaches(2)"), 1.0);
    QVERIFY(n.at("absent_token_change") > 0 && n.at("absent_token_weight") > 0);  // softmax: an empty token still takes weight
    QVERIFY(n.at("parameters") > 1000);
    QCOMPARE(n.at("kept(base)"), 0.25);
    QVERIFY(!n.count("score(1,1,2,3)"));  // masked: not a number
    QVERIFY(std::isnan(e.evaluate(n)));  // one unknown number makes the whole sum unknown

    TourExpression bad;
    QVERIFY(TourExpression::parse("induction(3,1)", bad, checkTourCall).empty());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, computeTourNumbers(bad.calls(), state));
    QVERIFY(TourExpression::parse("kv_ppl(nosuch,4)", bad, checkTourCall).empty());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, computeTourNumbers(bad.calls(), state));
  }
};

QTEST_GUILESS_MAIN(TestTourFormat)
#include "test_tour_format.moc"
