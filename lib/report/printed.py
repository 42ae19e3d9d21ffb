"""The report's settings and printed figures, in one place.

The report is Mustafa's Cambridge 3F8 "Full Technical Report" on Bayesian logistic classification
(``../shared/sources/report-3f8-bayesian-logistic-classification.md``; appendix A is the short
maximum-likelihood lab). Every figure below is **quoted as printed**, as a string ("0.91", not a
value of ours rounded to look like it), with the table or section it comes from. Chapters show these
beside ours with :func:`compare`; they are never used in place of a computation.

Labels follow the report's own tables, typos included; the remarks are in the chapters (e.g. the
Bayes blocks of tables 2 and 3 and the ``l = 0.01`` blocks of tables 8 and 9 label both rows
``y = 0``: here the second row is stored under ``"y=1"``, which is what it is).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Iterable, Mapping, Sequence

import numpy as np

from lib._validate import int_at_least

#: Base case of sections 3.1-3.2: prior variance and RBF width ("sigma_0 = 1, l = 0.1").
BASE_S2 = 1.0
BASE_WIDTH = 0.1

#: Best setting found by the report's 50 x 50 grid (section 3.3.2: "l = 0.479 and sigma_0 = 0.692").
BEST_S2 = 0.692
BEST_WIDTH = 0.479

#: Maximum likelihood by full-batch gradient ascent at the base width. These are the **book's**
#: settings: the report trained its ML solution with SciPy's optimiser (section 3.1) and does not
#: say for how long.
ML_LEARNING_RATE = 0.01
ML_STEPS = 3000

#: Confusion matrices are stored row-normalised, rows = ground truth ("y=0", "y=1"), columns =
#: prediction (0, 1), each entry the printed string.
_Matrix = Sequence[Sequence[str]]

#: The report's printed tables (main text, sections 3.2 and 3.3.2).
TABLES: dict = {
    # Table 1: "Average log-likelihoods, sigma_0 = 1, l = 0.1".
    "table1": {
        "ML": {"train": "-0.060", "test": "-0.551"},
        "MAP": {"train": "-0.220", "test": "-0.334"},
        "Bayes": {"train": "-0.260", "test": "-0.353"},
    },
    # Table 2: "Confusion matrices for training data of ML, MAP and Bayes solution for
    # sigma_0 = 0.1 and l = 0.1" (the caption's sigma_0 = 0.1 contradicts the base case sigma_0 = 1).
    "table2": {
        "ML": [["0.98", "0.02"], ["0.02", "0.98"]],
        "MAP": [["0.95", "0.05"], ["0.05", "0.95"]],
        "Bayes": [["0.95", "0.05"], ["0.05", "0.95"]],  # printed row labels: y = 0, y = 0
    },
    # Table 3: the same for the testing data.
    "table3": {
        "ML": [["0.84", "0.16"], ["0.07", "0.93"]],
        "MAP": [["0.91", "0.09"], ["0.12", "0.88"]],
        "Bayes": [["0.91", "0.09"], ["0.12", "0.88"]],  # printed row labels: y = 0, y = 0
    },
    # Table 4: "MAP vs. fully Bayesian predictions" (rows Bayes, columns MAP).
    "table4": {
        "train": [["1.00", "0.00"], ["0.00", "1.00"]],
        "test": [["1.00", "0.00"], ["0.00", "1.00"]],
    },
    # Table 5: "Final MAP predictions for l = 0.479 and sigma_0 = 0.692".
    "table5": {
        "train": [["0.94", "0.06"], ["0.07", "0.93"]],
        "test": [["0.90", "0.10"], ["0.08", "0.92"]],
    },
    # Table 6: "Best case average log-likelihoods, l = 0.479 and sigma_0 = 0.692".
    "table6": {
        "MAP": {"train": "-0.175", "test": "-0.218"},
        "Bayes": {"train": "-0.184", "test": "-0.220"},
    },
}

#: The report's appendix A (the short maximum-likelihood lab), tables 7-10. The lab split the data
#: 75/25 at random, without a seed (A.2.2), so these are one unknown split.
APPENDIX_TABLES: dict = {
    # Table 7: "Linear logistic classifier confusion matrices".
    "table7": {
        "train": [["0.74", "0.26"], ["0.29", "0.71"]],
        "test": [["0.75", "0.25"], ["0.25", "0.75"]],
    },
    # Table 8: "RBF Logistic classifier testing confusion matrices" (the TEST set).
    "table8": {
        1.0: [["0.83", "0.17"], ["0.27", "0.73"]],
        0.1: [["0.95", "0.05"], ["0.14", "0.86"]],
        0.01: [["0.98", "0.02"], ["0.91", "0.09"]],  # printed row labels: y = 0, y = 0
    },
    # Table 9: "RBF Logistic classifier training confusion matrices" (the TRAINING set).
    "table9": {
        1.0: [["0.86", "0.14"], ["0.14", "0.86"]],
        0.1: [["0.94", "0.06"], ["0.08", "0.92"]],
        0.01: [["1.00", "0.00"], ["0.00", "1.00"]],  # printed row labels: y = 0, y = 0
    },
    # Table 10: "Final log-likelihoods" (average log-likelihoods).
    "table10": {
        "RBF l=1": {"test": "-0.44", "train": "-0.36"},
        "RBF l=0.1": {"test": "-0.25", "train": "-0.20"},
        "RBF l=0.01": {"test": "-0.67", "train": "-0.07"},
        "Linear": {"test": "-0.63", "train": "-0.63"},
    },
}

#: Figures the report prints in its text, with the sentence they come from (short quotes).
TEXT: dict = {
    # Section 3.3.1, the coarse grid.
    "coarse_grid_size": ("ten by ten", "A ten by ten grid search was performed"),
    "coarse_range": ("10^{-4} < sigma_0 < 10^4 and 10^{-4} < l < 10^4", "varying the parameters logarithmically"),
    # The same range as exponents of ten (the same for sigma_0 and l).
    "coarse_exponent_low": ("-4", "in the range 10^{-4} < sigma_0 < 10^4 and 10^{-4} < l < 10^4"),
    "coarse_exponent_high": ("4", "in the range 10^{-4} < sigma_0 < 10^4 and 10^{-4} < l < 10^4"),
    "coarse_best_s2": ("6.31", "the best parameters were sigma_0 = 6.31 and l = 1"),
    "coarse_best_width": ("1", "the best parameters were sigma_0 = 6.31 and l = 1"),
    "coarse_best_accuracy": ("0.9", "with a predictive accuracy of 0.9"),
    "coarse_best_log_evidence": ("-188.4", "a model evidence log(X) = -188.4"),
    "feasible_region": ("0.1 < sigma_0, l < 10", "most feasible solutions lie within the 0.1 < sigma_0, l < 10"),
    "feasible_low": ("0.1", "most feasible solutions lie within the 0.1 < sigma_0, l < 10"),
    "feasible_high": ("10", "most feasible solutions lie within the 0.1 < sigma_0, l < 10"),
    # Section 3.3.2, the fine grid.
    "fine_grid_size": ("50 x 50", "A more comprehensive 50 x 50 grid search"),
    "fine_grid_side": ("50", "A more comprehensive 50 x 50 grid search"),
    "best_s2": ("0.692", "The best parameters from the 50 x 50 grid search were l = 0.479 and sigma_0 = 0.692"),
    "best_width": ("0.479", "The best parameters from the 50 x 50 grid search were l = 0.479 and sigma_0 = 0.692"),
    "best_test_accuracy": ("0.91", "giving a predictive accuracy of 0.91"),
    "best_log_evidence": ("-175.81", "a model evidence log(p(X)) = -175.81"),
    "max_accuracy": ("0.924", "accuracies of up to 0.924 were observed"),
    # Appendix A.4, the linear classifier.
    "linear_epochs": ("20", "the model typically converged after about 20 epochs"),
    "linear_train_ll": ("-0.624", "the average log-likelihoods were -0.624 and -0.631 for training and testing"),
    "linear_test_ll": ("-0.631", "the average log-likelihoods were -0.624 and -0.631 for training and testing"),
    # Appendix A.5.
    "rbf_best_accuracy": ("95/86%", "Up to 95/86% accuracy vs. 75/75%"),
    "linear_accuracy": ("75/75%", "Up to 95/86% accuracy vs. 75/75%"),
    "class_counts": ("494 ones and 506 0s", "the dataset has 494 ones and 506 0s"),
    "n_ones": ("494", "the dataset has 494 ones and 506 0s"),
    "n_zeros": ("506", "the dataset has 494 ones and 506 0s"),
    "majority_switch": ("0.51", "above 0.51 it predicts primarily 1s"),
    "rbf_epochs": ("500+", "required more training steps to converge (500+ vs 20 epochs)"),
    # Section 3.2, figure 3 (percent of the data; 10 of 1000 points).
    "fig3_percent": ("1", "If only 1% of the data is used for training"),
    "fig3_n_train": ("10", "Contour plots for ML, MAP and fully Bayesian solutions using only 10 training points"),
    # Captions of tables 2 and 3 (the prior they state; section 3.2 says the base case, sigma_0 = 1).
    "table23_caption_s2": ("0.1", "Confusion matrices for training data of ML, MAP and Bayes solution for sigma_0 = 0.1 and l = 0.1"),
    # Section 3.3.2 names the base case with the two values swapped (section 3.2: sigma_0 = 1, l = 0.1).
    "base_case_332_s2": ("0.1", "Though this is an improvement from the sigma_0 = 0.1, l = 1 base case"),
    "base_case_332_width": ("1", "Though this is an improvement from the sigma_0 = 0.1, l = 1 base case"),
}


def _figure(value, name: str = "value") -> str:
    """``value`` if it is a printed figure: a string holding one finite number, else an error
    naming ``name``. A float is refused: it has lost the decimals the report printed (``0.51``
    would read as 52 decimals, ``1.0`` as one)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a printed figure (str), got {type(value).__name__}")
    try:
        number = Decimal(value.strip())
    except ArithmeticError:
        raise ValueError(f"{name} {value!r} is not a single printed number") from None
    if not number.is_finite():
        raise ValueError(f"{name} must be a finite printed number, got {value!r}")
    return value


def printed(value: str) -> float:
    """The number a printed figure stands for (``"-0.060"`` -> ``-0.06``; ``"95/86%"`` is not one)."""
    return float(_figure(value))


def decimals(value: str) -> int:
    """Number of decimals a printed figure (a string) shows (``"-0.060"`` -> 3, ``"1"`` -> 0)."""
    return _decimals(_figure(value))


def _decimals(value: str) -> int:
    return max(0, -int(Decimal(value.strip()).as_tuple().exponent))


def agrees(value: str, ours: float) -> bool:
    """Whether ``ours``, rounded to the decimals the report printed, equals the printed figure:
    half-away-from-zero on the decimal value of ``ours`` as Python prints it, the way a report's
    table is usually produced (``0.905`` -> ``"0.91"``)."""
    return _agrees(_figure(value), _ours(ours))


def _ours(ours, name: str = "ours") -> float:
    if isinstance(ours, (bool, str)) or not isinstance(ours, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(ours).__name__}")
    if not np.isfinite(ours):
        raise ValueError(f"{name} must be finite, got {ours}")
    return float(ours)


def _agrees(value: str, ours: float) -> bool:
    quantum = Decimal(1).scaleb(-_decimals(value))
    rounded = Decimal(repr(ours)).quantize(quantum, rounding="ROUND_HALF_UP")
    return rounded == Decimal(value.strip()).quantize(quantum)


def compare(rows: Iterable[tuple[str, str, float]], ours_decimals: int = 3):
    """The table "report | ours | reproduced?" that ends each chapter.

    ``rows``: (quantity, printed, ours) triples, ``printed`` the report's figure as a string (from
    :data:`TABLES`, :data:`APPENDIX_TABLES` or :data:`TEXT`), ``ours`` the book's computed value;
    ``ours_decimals``: decimals shown for our value (the comparison uses the report's decimals).
    Returns a DataFrame indexed by quantity, columns ``report`` (as printed), ``ours`` (rounded to
    ``max(ours_decimals, decimals of the printed figure)``) and ``reproduced?`` ("yes"/"no": ours
    rounded to the printed decimals equals the printed figure).
    """
    import pandas as pd

    ours_decimals = int_at_least(ours_decimals, "ours_decimals", 0)
    if rows is None or isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise TypeError(f"rows must be an iterable of (quantity, printed, ours), got {rows!r}")
    records = []
    for k, row in enumerate(rows):
        if not isinstance(row, (tuple, list)) or len(row) != 3:
            raise ValueError(f"rows[{k}] must be a (quantity, printed, ours) triple, got {row!r}")
        quantity, value, ours = row
        value, ours = _figure(value, f"rows[{k}] printed"), _ours(ours, f"rows[{k}] ours")
        shown = max(ours_decimals, _decimals(value))
        records.append({"quantity": quantity, "report": value, "ours": f"{ours:.{shown}f}",
                        "reproduced?": "yes" if _agrees(value, ours) else "no"})
    if not records:
        raise ValueError("rows must hold at least one (quantity, printed, ours) row")
    return pd.DataFrame.from_records(records).set_index("quantity")


def confusion_rows(label: str, printed_matrix: _Matrix, ours) -> list[tuple[str, str, float]]:
    """Rows for :func:`compare` from a printed 2 x 2 confusion matrix and ours (same layout)."""
    ours = np.asarray(ours, dtype=float)
    if ours.shape != (2, 2):
        raise ValueError(f"ours must be a 2 x 2 confusion matrix, got shape {ours.shape}")
    try:
        cells = [[printed_matrix[i][j] for j in range(2)] for i in range(2)]
    except (TypeError, IndexError, KeyError):
        raise TypeError(f"printed_matrix must be a 2 x 2 nested sequence of printed figures, got "
                        f"{printed_matrix!r}") from None
    for i, j in np.ndindex(2, 2):
        _figure(cells[i][j], f"printed_matrix[{i}][{j}]")
    return [(f"{label} P(ŷ={j} | y={i})", cells[i][j], ours[i, j]) for i in range(2) for j in range(2)]


def confusion_frame(matrices: Mapping[str, object], *, truth: str = "y", prediction: str = "ŷ", digits: int = 2):
    """Several 2 x 2 row-normalised confusion matrices side by side, as one table.

    ``matrices`` maps a block name to a (2, 2) array-like of floats or printed strings, rows the
    ground truth (0, 1), columns the prediction (0, 1): printed strings (the report's) are shown
    as printed, floats rounded to ``digits``; ``truth``, ``prediction`` name the row and column
    variables. Returns a DataFrame: rows ``truth = 0, 1``, columns a MultiIndex (block,
    ``prediction = 0, 1``), a block named ``"report"`` first (as :func:`compare`: report, ours).
    """
    import pandas as pd

    digits = int_at_least(digits, "digits", 0)
    if not matrices:
        raise ValueError("matrices must hold at least one block")
    blocks = {}
    # one column order in every report-vs-ours display: the report's block first
    for name, matrix in sorted(matrices.items(), key=lambda item: item[0] != "report"):
        cells = np.asarray(matrix, dtype=object)
        if cells.shape != (2, 2):
            raise ValueError(f"matrices[{name!r}] must be 2 x 2, got shape {cells.shape}")
        shown = [[c if isinstance(c, str) else f"{float(c):.{digits}f}" for c in row] for row in cells]
        blocks[name] = pd.DataFrame(shown, columns=[f"{prediction} = 0", f"{prediction} = 1"],
                                    index=pd.Index([f"{truth} = 0", f"{truth} = 1"], name="ground truth"))
    return pd.concat(blocks, axis=1)
