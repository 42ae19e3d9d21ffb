"""lib.report.printed: the quoted figures are well formed, and the comparison rounds as the report did."""
import re
from pathlib import Path

import numpy as np
import pytest

import lib.report.printed as report

SOURCE = Path(__file__).resolve().parents[2] / "shared" / "sources" / "report-3f8-bayesian-logistic-classification.md"


def _all_printed():
    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                yield from walk(value)
        else:
            yield node

    return list(walk(report.TABLES)) + list(walk(report.APPENDIX_TABLES))


def test_every_table_entry_is_a_printed_number():
    values = _all_printed()
    assert len(values) == 3 * 2 + 3 * 4 * 2 + 2 * 4 * 2 + 2 * 2 + 2 * 4 + 3 * 4 * 2 + 4 * 2
    for value in values:
        assert isinstance(value, str) and re.fullmatch(r"-?\d+\.\d+", value), value


def test_confusion_rows_sum_to_one_as_printed():
    for table in ("table2", "table3", "table4", "table5"):
        for matrix in report.TABLES[table].values():
            assert np.allclose(np.vectorize(float)(np.array(matrix)).sum(axis=1), 1.0)
    for table in ("table7", "table8", "table9"):
        for matrix in report.APPENDIX_TABLES[table].values():
            assert np.allclose(np.vectorize(float)(np.array(matrix)).sum(axis=1), 1.0)


@pytest.mark.skipif(not SOURCE.exists(), reason="the report's text is not beside the project")
def test_text_quotes_occur_in_the_report():
    text = re.sub(r"\s+", " ", SOURCE.read_text(encoding="utf-8"))
    for key, (figure, _) in report.TEXT.items():
        if key in ("coarse_range", "feasible_region"):
            continue  # LaTeX in the source
        assert figure.replace("^{-4}", "") in text, key
    for value in _all_printed():
        assert value in text, value


@pytest.mark.parametrize(
    "printed, ours, expected",
    [
        ("0.91", 0.908, True),
        ("0.91", 0.9049, False),
        ("0.91", 0.905, True),  # half away from zero, on the decimal value as printed
        ("-0.060", -0.0604, True),
        ("-0.060", -0.0605, False),  # rounds to -0.061
        ("-0.44", -0.193, False),
        ("1", 1.2, True),
        ("1.00", 0.996, True),
        ("0.00", -0.001, True),
    ],
)
def test_agrees(printed, ours, expected):
    assert report.agrees(printed, ours) is expected


def test_printed_and_decimals():
    assert report.printed("-0.060") == -0.06
    assert report.decimals("-0.060") == 3
    assert report.decimals("6.31") == 2
    assert report.decimals("1") == 0


def test_compare_table():
    table = report.compare([("accuracy", "0.91", 0.908), ("ll", "-0.44", -0.193)])
    assert list(table.columns) == ["report", "ours", "reproduced?"]
    assert table.loc["accuracy"].tolist() == ["0.91", "0.908", "yes"]
    assert table.loc["ll"].tolist() == ["-0.44", "-0.193", "no"]


def test_confusion_frame_layout():
    frame = report.confusion_frame({"report": [["0.98", "0.02"], ["0.02", "0.98"]], "ours": np.eye(2)})
    assert frame.shape == (2, 4)
    assert frame[("report", "ŷ = 0")].tolist() == ["0.98", "0.02"]
    assert frame[("ours", "ŷ = 1")].tolist() == ["0.00", "1.00"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: report.printed(0.5), "value must be a printed figure"),
        (lambda: report.printed("95/86%"), "not a single printed number"),
        (lambda: report.agrees("0.91", float("nan")), "ours must be finite"),
        (lambda: report.compare([]), "rows must hold at least one"),
        (lambda: report.confusion_rows("x", [["1", "0"], ["0", "1"]], np.eye(3)), "ours must be a 2 x 2"),
        (lambda: report.confusion_frame({}), "matrices must hold at least one"),
        (lambda: report.confusion_frame({"a": np.eye(3)}), r"matrices\['a'\] must be 2 x 2"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()
