"""transformerland._validation: clear errors for bad arguments."""

import pytest
import torch
from transformerland._validation import (
    MAX_ELEMENTS,
    MAX_SIZE,
    require_bool,
    require_choice,
    require_device,
    require_elements,
    require_even,
    require_float_tensor,
    require_index_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
    require_real,
    require_same,
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


# --- The rest of the layer: booleans, finite numbers, caps, tensors' dtypes, devices ----------------------


@pytest.mark.parametrize("value", ["no", "yes", 0, 1, None, 1.0])
def test_booleans_are_real_booleans(value):
    with pytest.raises(TypeError, match=r"causal must be True or False \(what it does\), got"):
        require_bool(value, "causal", "what it does")
    assert require_bool(False, "causal") is False


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_numbers_are_finite(value):
    with pytest.raises(ValueError, match="finite"):
        require_positive_float(value, "base")


def test_numbers_in_their_range_and_whole_numbers():
    assert require_real(0.5, "p", low=0, high=1, high_open=True) == 0.5
    with pytest.raises(ValueError, match=r"p must be a number \(≥ 0 and < 1\), got 1"):
        require_real(1.0, "p", low=0, high=1, high_open=True)
    with pytest.raises(TypeError, match="whole number"):
        require_int(2.5, "seed")
    with pytest.raises(ValueError, match="from 0, got -1"):
        require_int(-1, "seed", low=0)


def test_sizes_have_named_caps_checked_before_allocation():
    assert require_positive_int(MAX_SIZE, "length") == MAX_SIZE
    with pytest.raises(ValueError, match=f"{MAX_SIZE:,}"):
        require_positive_int(MAX_SIZE + 1, "length")
    with pytest.raises(ValueError, match="MAX_ELEMENTS"):
        require_elements(MAX_ELEMENTS + 1, "the table")


def test_integer_tensors_are_refused_not_promoted():
    with pytest.raises(TypeError, match=r"floating dtype, got dtype torch.int64.*x.float\(\)"):
        require_float_tensor(torch.arange(4), "x")
    assert require_float_tensor(torch.zeros(2, dtype=torch.float64), "x").dtype == torch.float64
    with pytest.raises(TypeError, match="integer ids"):
        require_index_tensor(torch.zeros(2), "ids")


def test_tensors_that_meet_share_dtype_and_device_and_devices_exist():
    with pytest.raises(TypeError, match=r"k has dtype torch\.float64 but q has dtype torch\.float32"):
        require_same([("q", torch.zeros(2)), ("k", torch.zeros(2, dtype=torch.float64))])
    assert require_device("cpu") == torch.device("cpu")
    for bad, error in (("tpu", ValueError), ("cuda:99", ValueError), (3, TypeError)):
        with pytest.raises(error, match="device"):
            require_device(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            require_device("cuda")
