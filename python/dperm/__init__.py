"""dperm from Python: scikit-learn-style estimators that train in the
database, scoring of DataFrames equal to the server's, the privacy budget as
DataFrames and pictures, and errors that keep their SQLSTATE.

docs/python.md walks through it.
"""
from .budget import (budget_remaining, budgets, evaluations, forecast, ledger, models,
                     set_budget)
from .connection import connect
from .encoding import FeatureSpec, Model
from .errors import (BudgetExhausted, DPermError, DuplicateObject, InsufficientPrivilege,
                     InvalidModel, InvalidParameter, LockNotAvailable,
                     ObjectNotInPrerequisiteState, UndefinedObject)
from .estimators import DPHuberRegressor, DPLogisticRegression, DPSoftmaxRegression, Query
from .plots import plot_forecast, plot_privacy_utility, plot_spend

__version__ = "0.7.0"

__all__ = [
    "connect", "DPLogisticRegression", "DPSoftmaxRegression", "DPHuberRegressor", "Query",
    "FeatureSpec", "Model", "ledger", "budgets", "forecast", "models", "evaluations", "set_budget",
    "budget_remaining",
    "plot_spend", "plot_forecast", "plot_privacy_utility",
    "DPermError", "BudgetExhausted", "InvalidParameter", "InvalidModel", "UndefinedObject",
    "DuplicateObject", "InsufficientPrivilege", "LockNotAvailable",
    "ObjectNotInPrerequisiteState",
]
