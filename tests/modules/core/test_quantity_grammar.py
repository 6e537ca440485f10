"""modules/core/quantity.py against k8s.io/apimachinery's quantity grammar."""
from __future__ import annotations

from decimal import Decimal

import pytest

from modules.core.quantity import parse_quantity


@pytest.mark.parametrize("text, value", [("1E", 10**18), ("2E", 2 * 10**18), ("1e3", 1000), ("1E3", 1000),
                                         ("1Ei", 2**60), ("500m", Decimal("0.5"))])
def test_suffixes_and_exponents(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["5\n", "1Gi\n", "E", "1EE"])
def test_not_quantities(text):
    with pytest.raises(ValueError, match="not a quantity"):
        parse_quantity(text)
