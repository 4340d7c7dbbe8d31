"""transformerland._validation: clear errors for bad arguments."""

import pytest
import torch
from transformerland._validation import (
    require_choice,
    require_even,
    require_positive_float,
    require_positive_int,
    require_tensor,
)


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (-3, ValueError), (2.5, TypeError), (True, TypeError)])
def test_positive_int(value, error):
    with pytest.raises(error, match="positive integer"):
        require_positive_int(value, "size")


def test_positive_float_and_even():
    assert require_positive_float(2, "base") == 2.0
    with pytest.raises(ValueError, match="positive number"):
        require_positive_float(0.0, "base")
    with pytest.raises(ValueError, match="Use 6 or 8"):
        require_even(7, "d_model", "pairs.")


def test_tensor_and_choice():
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        require_tensor([1, 2], "x")
    with pytest.raises(ValueError, match="3 dimensions"):
        require_tensor(torch.zeros(2), "x", ndim=3)
    with pytest.raises(ValueError, match="'a', 'b'"):
        require_choice("c", "layout", ("a", "b"))
