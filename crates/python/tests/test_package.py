import arrays


def test_version_is_the_crate_version():
    assert arrays.__version__ == "0.1.0"
