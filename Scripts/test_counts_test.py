#!/usr/bin/env python3
"""Tests of Scripts/test-counts on synthetic `swift test --verbose` logs (Swift Testing 6.3's console output).

    python3 Scripts/test_counts_test.py      (or: Scripts/test-counts --self-test)

Every case checks the closing line, which must stay `tests: N passed, F failed, S skipped` and have F > 0
whenever the logs (or the exit status .ci/run passes) show a failure. The log lines are as long as Swift Testing
prints them.
"""

import importlib.machinery
import importlib.util
import io
import os
import re
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader("test_counts", os.path.join(HERE, "test-counts"))
_spec = importlib.util.spec_from_loader("test_counts", _loader)
test_counts = importlib.util.module_from_spec(_spec)
_loader.exec_module(test_counts)

CLOSING = re.compile(r"^tests: (\d+) passed, (\d+) failed, (\d+) skipped$")

HEADER = """\
[0/1] Planning build
◇ Test run started.
↳ Testing Library Version: 6.3.1 (937120cbc281cf2)
↳ Target Platform: x86_64-unknown-linux-gnu
"""

# A parameterised test whose cases all pass, one with a known issue, and two plain tests.
MATRIX = """\
◇ Suite PluginMatrixTests started.
◇ Test cell(_:_:) started.
◇ Test case passing 2 arguments pluginKind → .gzip (M.PluginKind), exchange → .buffered (M.ExchangeKind) to cell(_:_:) started.
✔ Test case passing 2 arguments pluginKind → .gzip (M.PluginKind), exchange → .buffered (M.ExchangeKind) to cell(_:_:) passed after 0.002 seconds.
◇ Test case passing 2 arguments pluginKind → .gzip (M.PluginKind), exchange → .failedMidBody (M.ExchangeKind) to cell(_:_:) started.
━ Test cell(_:_:) recorded a known issue with 2 arguments pluginKind → .gzip, exchange → .failedMidBody at PluginMatrixTests.swift:355:21: Expectation failed
↳ URLSession returns a truncated gzip body as a short 200
━ Test case passing 2 arguments pluginKind → .gzip (M.PluginKind), exchange → .failedMidBody (M.ExchangeKind) to cell(_:_:) passed after 0.003 seconds with 1 known issue.
◇ Test case passing 2 arguments pluginKind → .metrics (M.PluginKind), exchange → .buffered (M.ExchangeKind) to cell(_:_:) started.
✔ Test case passing 2 arguments pluginKind → .metrics (M.PluginKind), exchange → .buffered (M.ExchangeKind) to cell(_:_:) passed after 0.001 seconds.
━ Test cell(_:_:) with 3 test cases passed after 0.305 seconds with 1 known issue.
━ Suite PluginMatrixTests passed after 0.305 seconds with 1 known issue.
"""
PLAIN = """\
◇ Suite Basics started.
◇ Test passes() started.
✔ Test passes() passed after 0.001 seconds.
◇ Test warns() started.
⚠︎ Test warns() recorded a warning at Basics.swift:9:5: Issue recorded
✔ Test warns() passed after 0.001 seconds with 1 warning.
✔ Suite Basics passed after 0.002 seconds.
"""
CLEAN = HEADER + MATRIX + PLAIN
CLEAN += "━ Test run with 3 tests in 2 suites passed after 0.31 seconds with 1 known issue.\n"


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as log:
        log.write(text)
    return path


class CountsTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def log(self, text, name="test.log"):
        return write(self.directory.name, name, text)

    def count(self, *arguments):
        out, err = io.StringIO(), io.StringIO()
        status = test_counts.count(list(arguments), out=out, err=err)
        lines = out.getvalue().splitlines()
        closing = CLOSING.match(lines[-1])
        self.assertIsNotNone(closing, f"no closing line last: {lines}")
        self.assertEqual(sum(1 for line in lines if line.startswith("tests:")), 1)
        passed, failed, skipped = (int(group) for group in closing.groups())
        # The script fails exactly when the closing line counts a failure.
        self.assertEqual(status != 0, failed > 0, out.getvalue() + err.getvalue())
        return (passed, failed, skipped), out.getvalue(), err.getvalue()

    def test_a_clean_run_counts_each_case_and_keeps_known_issues_apart(self):
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(CLEAN))
        # Matrix: 2 passing cases (the known one apart); Basics: passes() and warns() (a warning passes).
        self.assertEqual((passed, failed, skipped), (4, 0, 0), out + err)
        self.assertIn("run plain: 4 passed, 0 failed, 0 skipped, 1 with known issues", out)
        self.assertIn(
            "known issue: PluginMatrixTests/cell(_:_:) [pluginKind → .gzip, exchange → .failedMidBody] (plain)", out
        )
        self.assertIn("known issues: 1 (not counted as passed)", out)
        self.assertNotIn("error:", err)

    def test_a_known_issue_in_several_runs_is_listed_once_with_its_runs(self):
        path = self.log(CLEAN + CLEAN)
        (passed, failed, skipped), out, err = self.count("plain,curl=" + path)
        self.assertEqual((passed, failed, skipped), (8, 0, 0))
        self.assertIn("[pluginKind → .gzip, exchange → .failedMidBody] (plain, curl)", out)
        self.assertIn("known issues: 2 (not counted as passed)", out)

    def test_a_test_whose_only_issue_is_known_is_not_passed(self):
        text = HEADER + """\
◇ Test known() started.
━ Test known() recorded a known issue at A.swift:14:59: Expectation failed: (double(1) → 2) == 3
━ Test known() passed after 0.001 seconds with 1 known issue.
◇ Test knownAndFail() started.
━ Test knownAndFail() recorded a known issue at A.swift:16:35: Expectation failed
✘ Test knownAndFail() recorded an issue at A.swift:17:9: Expectation failed: (double(1) → 2) == 5
✘ Test knownAndFail() failed after 0.001 seconds with 2 issues (including 1 known issue).
◇ Test fine() started.
✔ Test fine() passed after 0.001 seconds.
✘ Test run with 3 tests in 0 suites failed after 0.003 seconds with 2 issues (including 1 known issue).
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (1, 1, 0))
        self.assertIn("known issue: known() (plain)", out)
        self.assertIn("error: plain: failed: knownAndFail()", err)

    def test_a_failing_case_is_a_failed_item_and_the_other_cases_pass(self):
        text = HEADER + """\
◇ Suite Outer started.
◇ Test param(_:) started.
◇ Test case passing 1 argument x → 1 (Swift.Int) to param(_:) started.
✔ Test case passing 1 argument x → 1 (Swift.Int) to param(_:) passed after 0.001 seconds.
◇ Test case passing 1 argument x → 2 (Swift.Int) to param(_:) started.
✘ Test param(_:) recorded an issue with 1 argument x → 2 at LibTests.swift:9:56: Expectation failed: (double(x) → 4) != 4
↳ double(x): Swift.Int → 4
✘ Test case passing 1 argument x → 2 (Swift.Int) to param(_:) failed after 0.001 seconds with 1 issue.
◇ Test case passing 1 argument x → 3 (Swift.Int) to param(_:) started.
✔ Test case passing 1 argument x → 3 (Swift.Int) to param(_:) passed after 0.001 seconds.
✘ Test param(_:) with 3 test cases failed after 0.001 seconds with 1 issue.
✘ Suite Outer failed after 0.003 seconds with 1 issue.
✘ Test run with 1 test in 1 suite failed after 0.003 seconds with 1 issue.
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (2, 1, 0))
        self.assertIn("error: plain: failed: Outer/param(_:) [x → 2]", err)

    def test_a_failure_outside_the_cases_fails_the_test(self):
        text = HEADER + """\
◇ Test param(_:) started.
◇ Test case passing 1 argument x → 1 (Swift.Int) to param(_:) started.
✔ Test case passing 1 argument x → 1 (Swift.Int) to param(_:) passed after 0.001 seconds.
✘ Test param(_:) recorded an issue at A.swift:3:4: Caught error: no more arguments
✘ Test param(_:) with 1 test case failed after 0.001 seconds with 1 issue.
✘ Test run with 1 test in 0 suites failed after 0.003 seconds with 1 issue.
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (1, 1, 0))
        self.assertIn("error: plain: failed: param(_:)", err)

    def test_a_case_without_a_result_line_is_a_failure(self):
        text = HEADER + """\
◇ Test param(_:) started.
◇ Test case passing 1 argument x → 1 (Swift.Int) to param(_:) started.
✔ Test case passing 1 argument x → 1 (Swift.Int) to param(_:) passed after 0.001 seconds.
◇ Test case passing 1 argument x → 2 (Swift.Int) to param(_:) started.
something this script does not know
✔ Test param(_:) with 2 test cases passed after 0.001 seconds.
✔ Test run with 1 test in 0 suites passed after 0.003 seconds.
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (1, 1, 0))
        self.assertIn("1 of its 2 cases without a result line", err)

    def test_arguments_with_line_breaks_and_nul_are_read(self):
        # "a\r\nb" spans two lines; "a\0b" cuts the line at the NUL, with its line break, so the next follows on it.
        text = HEADER + (
            "◇ Test inject(value:) started.\n"
            '◇ Test case passing 1 argument value → "a\r\nb" (Swift.String) to inject(value:) started.\n'
            '✔ Test case passing 1 argument value → "a\r\nb" (Swift.String) to inject(value:) passed after 0.001 seconds.\n'
            '◇ Test case passing 1 argument value → "a'
            '✘ Test case passing 1 argument value → "a'
            '◇ Test case passing 1 argument value → "to" (Swift.String) to inject(value:) started.\n'
            '✔ Test case passing 1 argument value → "to" (Swift.String) to inject(value:) passed after 0.001 seconds.\n'
            "✘ Test inject(value:) with 3 test cases failed after 0.001 seconds with 1 issue.\n"
            "✘ Test run with 1 test in 0 suites failed after 0.003 seconds with 1 issue.\n"
        )
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (2, 1, 0), out + err)
        self.assertIn('error: plain: failed: inject(value:) [value → "a…]', err)

    def test_an_issue_message_that_reads_like_a_result_is_not_one(self):
        text = HEADER + """\
◇ Test retries() started.
✘ Test retries() recorded an issue at A.swift:3:4: Caught error: request failed after 3 seconds.
✘ Test retries() failed after 3.001 seconds with 1 issue.
✘ Test run with 1 test in 0 suites failed after 3.003 seconds with 1 issue.
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (0, 1, 0))
        self.assertNotIn("summary says", err)

    def test_a_crash_in_a_case_fails_that_case(self):
        text = HEADER + MATRIX + """\
◇ Suite Inner started.
◇ Test crashCase(_:) started.
◇ Test case passing 1 argument x → 10 (Swift.Int) to crashCase(_:) started.
✔ Test case passing 1 argument x → 10 (Swift.Int) to crashCase(_:) passed after 0.001 seconds.
◇ Test case passing 1 argument x → 20 (Swift.Int) to crashCase(_:) started.
LibTests/LibTests.swift:30: Fatal error: case boom
💣 Program crashed: Illegal instruction at 0x00007fc29fcf9361
 15 [async]          0x00007fc2a01f3650 withTaskCancellationHandler<A>(operation:onCancel:isolation:) in libswift_Concurrency.serror: Process '/x/PkgPackageTests.xctest --testing-library swift-testing' exited with unexpected signal code 4
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (3, 1, 0))
        self.assertIn(
            "error: plain: failed: Inner/crashCase(_:) [x → 20] (started, no result: the run stopped before its "
            "summary, signal 4)",
            err,
        )

    def test_a_killed_run_fails_the_test_that_was_running(self):
        text = HEADER + PLAIN + "◇ Suite Slow started.\n◇ Test hangs() started.\n"
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (2, 1, 0))
        self.assertIn("Slow/hangs() (started, no result", err)

    def test_a_run_cut_between_tests_still_fails(self):
        # Output buffered by swift test: the log ends mid-line, with no test left open.
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(HEADER + PLAIN + "✔ Test fin"))
        self.assertEqual((passed, failed, skipped), (2, 1, 0))
        self.assertIn("the run stopped before its summary line, between tests", err)

    def test_a_log_that_stops_before_its_run_starts_fails(self):
        (passed, failed, skipped), out, err = self.count("plain=" + self.log("[0/1] Planning build\n"))
        self.assertEqual(failed, 1)
        self.assertIn("holds no test run", err)

    def test_a_missing_log_fails_and_the_closing_line_is_printed(self):
        (passed, failed, skipped), out, err = self.count("plain=" + os.path.join(self.directory.name, "none.log"))
        self.assertEqual(failed, 1)
        self.assertIn("cannot read", err)

    def test_a_build_that_failed_with_no_log_is_one_failed_step(self):
        (passed, failed, skipped), out, err = self.count("--exit-status", "1", "--step", "Scripts/test")
        self.assertEqual((passed, failed, skipped), (0, 1, 0))
        self.assertIn("error: Scripts/test (stopped, exit 1)", err)

    def test_a_step_after_clean_runs_that_fails_is_one_failed_item(self):
        (passed, failed, skipped), out, err = self.count(
            "--exit-status=2", "--step=Scripts/docs", "plain=" + self.log(CLEAN)
        )
        self.assertEqual((passed, failed, skipped), (4, 1, 0))
        self.assertIn("error: Scripts/docs (stopped, exit 2)", err)

    def test_a_failed_step_already_counted_by_its_tests_is_not_counted_twice(self):
        text = HEADER + "◇ Test f() started.\n✘ Test f() failed after 0.001 seconds with 1 issue.\n"
        text += "✘ Test run with 1 test in 0 suites failed after 0.003 seconds with 1 issue.\n"
        (passed, failed, skipped), out, err = self.count(
            "--exit-status", "1", "--step", "Scripts/test", "plain=" + self.log(text)
        )
        self.assertEqual((passed, failed, skipped), (0, 1, 0))
        self.assertIn("note: Scripts/test stopped CI (exit 1)", err)

    def test_nothing_to_count_and_no_failure_is_a_failure(self):
        (passed, failed, skipped), out, err = self.count("--exit-status", "0")
        self.assertEqual((passed, failed, skipped), (0, 1, 0))
        self.assertIn("error: no test ran", err)

    def test_a_summary_that_failed_with_no_failed_test_is_a_failure(self):
        text = HEADER + PLAIN + "✘ Test run with 2 tests in 1 suite failed after 0.003 seconds with 1 issue.\n"
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (2, 1, 0))
        self.assertIn("an issue outside any test", err)

    def test_a_summary_that_counts_other_tests_is_a_failure(self):
        text = HEADER + PLAIN + "✔ Test run with 3 tests in 1 suite passed after 0.003 seconds.\n"
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual(failed, 1)
        self.assertIn("2 test result lines but the summary says 3 tests", err)

    def test_a_sanitizer_report_is_a_failure(self):
        report = "WARNING: ThreadSanitizer: data race (pid=1)\n"
        text = HEADER + PLAIN.replace("◇ Test warns() started.\n", "◇ Test warns() started.\n" + report)
        text += "✔ Test run with 2 tests in 1 suite passed after 0.003 seconds.\n"
        (passed, failed, skipped), out, err = self.count("thread=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (2, 1, 0))
        self.assertIn("1 sanitizer report(s)", err)

    def test_a_signal_after_the_summary_is_a_failure(self):
        text = CLEAN + "error: Process '/x.xctest' exited with unexpected signal code 11\n"
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (4, 1, 0))
        self.assertIn("exited on signal 11 after its summary", err)

    def test_a_test_skipped_in_every_run_fails_and_one_that_ran_somewhere_does_not(self):
        skips = CLEAN.replace(
            "✔ Suite Basics", '➜ Test later() skipped: "not on Linux"\n✔ Suite Basics'
        ).replace("with 3 tests", "with 4 tests")
        runs = skips.replace(
            '➜ Test later() skipped: "not on Linux"',
            "◇ Test later() started.\n✔ Test later() passed after 0.001 seconds.",
        )
        (passed, failed, skipped), out, err = self.count(
            "plain=" + self.log(skips), "curl=" + self.log(runs, "curl.log")
        )
        self.assertEqual((passed, failed, skipped), (9, 0, 1), out + err)
        (passed, failed, skipped), out, err = self.count("plain,curl=" + self.log(skips + skips))
        self.assertEqual((passed, failed, skipped), (8, 1, 2))
        self.assertIn("error: ran nowhere (skipped in plain, curl): Basics/later() (not on Linux)", err)

    def test_a_log_without_per_case_lines_counts_the_test_once_and_warns(self):
        text = HEADER + """\
◇ Test param(_:) started.
◇ Test case passing 1 argument x → 1 to param(_:) started.
◇ Test case passing 1 argument x → 2 to param(_:) started.
✘ Test param(_:) recorded an issue with 1 argument x → 2 at LibTests.swift:9:56: Expectation failed
✘ Test param(_:) with 2 test cases failed after 0.001 seconds with 1 issue.
✘ Test run with 1 test in 0 suites failed after 0.003 seconds with 1 issue.
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (0, 1, 0))
        self.assertIn("made without `swift test --verbose`", err)

    def test_a_test_is_named_alike_with_and_without_verbose(self):
        verbose = HEADER + """\
◇ Suite "Gzip codec" (aka 'CodecTests') started.
➜ Test "a bomb stops" (aka 'bomb()') skipped: "memory run only"
◇ Test "named" (aka 'named(_:)') started.
◇ Test case passing 1 argument x → 1 (Swift.Int) to "named" (aka 'named(_:)') started.
✔ Test case passing 1 argument x → 1 (Swift.Int) to "named" (aka 'named(_:)') passed after 0.001 seconds.
✔ Test "named" (aka 'named(_:)') with 1 test case passed after 0.001 seconds.
✔ Suite "Gzip codec" (aka 'CodecTests') passed after 0.002 seconds.
✔ Test run with 2 tests in 1 suite passed after 0.003 seconds.
"""
        plain = HEADER + """\
◇ Suite "Gzip codec" started.
◇ Test "a bomb stops" started.
✔ Test "a bomb stops" passed after 0.001 seconds.
✔ Suite "Gzip codec" passed after 0.002 seconds.
✔ Test run with 1 test in 1 suite passed after 0.003 seconds.
"""
        (passed, failed, skipped), out, err = self.count(
            "plain=" + self.log(verbose), "memory=" + self.log(plain, "memory.log")
        )
        self.assertEqual((passed, failed, skipped), (2, 0, 1), out + err)

    def test_colours_are_ignored(self):
        coloured = re.sub(r"^([◇✔✘━➜])", "\x1b[90m\\1\x1b[0m", CLEAN, flags=re.MULTILINE)
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(coloured))
        self.assertEqual((passed, failed, skipped), (4, 0, 0))

    def test_a_skipped_suite_lists_its_tests(self):
        text = HEADER + """\
◇ Suite Outer started.
➜ Suite Off skipped: "whole suite off"
➜ Test a() skipped: "whole suite off"
➜ Test b(_:) skipped: "whole suite off"
◇ Test c() started.
✔ Test c() passed after 0.001 seconds.
✔ Suite Outer passed after 0.003 seconds.
✔ Test run with 3 tests in 2 suites passed after 0.003 seconds.
"""
        (passed, failed, skipped), out, err = self.count("plain=" + self.log(text))
        self.assertEqual((passed, failed, skipped), (1, 2, 2))
        self.assertIn("Outer/Off/b(_:)", err)

    def test_a_usage_error_still_prints_a_failing_closing_line(self):
        out, err = io.StringIO(), io.StringIO()
        self.assertEqual(test_counts.count(["--exit-status", "one"], out=out, err=err), 64)
        self.assertEqual(out.getvalue().splitlines()[-1], "tests: 0 passed, 1 failed, 0 skipped")

    def test_a_bug_in_the_counting_still_prints_a_failing_closing_line(self):
        original = test_counts.count
        test_counts.count = lambda arguments: 1 / 0
        try:
            out = io.StringIO()
            import contextlib

            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                status = test_counts.main(["plain=x.log"])
        finally:
            test_counts.count = original
        self.assertEqual(status, 1)
        self.assertEqual(out.getvalue().splitlines()[-1], "tests: 0 passed, 1 failed, 0 skipped")


if __name__ == "__main__":
    unittest.main()
