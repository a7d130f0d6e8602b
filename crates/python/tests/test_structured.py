"""arrays.structured on hand-worked examples from TensorFlow's StructuredTensor docstrings
and guide (the results TensorFlow 2.x prints for them), and round trips."""

import numpy as np
import pytest

from arrays.structured import StructuredTensor, concat

PEOPLE = [
    {"age": 12, "nicknames": ["Josaphine"], "shoes": {"sizes": [8.0, 7.5, 7.5]}},
    {"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0, 11.5, 12.0]}},
    {"age": 42, "nicknames": ["Elmo"], "shoes": {"sizes": [9.0, 9.5, 10.0]}},
]


def test_from_pyval_of_the_guide():
    st = StructuredTensor.from_pyval(PEOPLE)
    assert st.shape == (3,) and st.rank == 1 and st.nrows() == 3
    assert sorted(st.field_names()) == ["age", "nicknames", "shoes"]
    assert st["age"] == [12, 82, 42]
    assert st.field_value("nicknames") == [["Josaphine"], ["Bob", "Bobby"], ["Elmo"]]
    assert st.field_value(("shoes", "sizes")) == [[8.0, 7.5, 7.5], [11.0, 11.5, 12.0], [9.0, 9.5, 10.0]]
    shoes = st["shoes"]
    assert isinstance(shoes, StructuredTensor) and shoes.shape == (3,)
    assert st.to_pyval() == PEOPLE


@pytest.mark.parametrize(
    "pyval,shape",
    [
        ({"a": 1, "b": "x"}, ()),
        ([{"a": 1}, {"a": 2}], (2,)),
        ([[{"a": 1}, {"a": 2}], [{"a": 3}]], (2, None)),
        ([[{"a": 1}, {"a": 2}], [{"a": 3}, {"a": 4}]], (2, 2)),
        ({"a": [{"b": 1}, {"b": 2}]}, ()),
        ([], (0,)),
    ],
)
def test_shapes_and_round_trips(pyval, shape):
    st = StructuredTensor.from_pyval(pyval)
    assert st.shape == shape
    assert st.to_pyval() == pyval


def test_numpy_values_go_in_as_python_values():
    st = StructuredTensor.from_pyval([{"v": np.int64(3), "w": np.array([1.5, 2.5])}])
    assert st.to_pyval() == [{"v": 3, "w": [1.5, 2.5]}]


def test_ops():
    st = StructuredTensor.from_pyval(PEOPLE)
    assert st.gather([2, 0])["age"] == [42, 12]
    assert st.boolean_mask([True, False, True])["age"] == [12, 42]
    both = concat([st, st.gather([1])])
    assert both["age"] == [12, 82, 42, 82]
    nested = st.partition_outer_dimension([0, 2, 3])
    assert nested.shape == (2, None)
    assert nested["age"] == [[12, 82], [42]]
    assert nested.merge_dims(0, 1)["age"] == [12, 82, 42]


def test_errors():
    with pytest.raises(ValueError):
        StructuredTensor.from_pyval([{"a": 1}, {"a": "x"}])  # mixed types
    with pytest.raises(ValueError):
        StructuredTensor.from_pyval([{"a": 1}, {"b": 2}])  # different keys
    with pytest.raises(ValueError, match="NaN"):
        StructuredTensor.from_pyval({"a": float("nan")})
    st = StructuredTensor.from_pyval(PEOPLE)
    with pytest.raises(KeyError):
        st.field_value("height")
    with pytest.raises(ValueError, match=r"indices\[0\] = 5 is not in \[0, 3\)"):
        st.gather([5])
    with pytest.raises(ValueError):
        st.boolean_mask([True])
    with pytest.raises(ValueError):
        st.partition_outer_dimension([0, 2])
