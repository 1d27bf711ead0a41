import math

import pytest

from mobitrace.studies.cpu_gbps.analysis import Line


def test_line_through_hand_computed_points():
    line = Line.through((1.0, 3.0), (3.0, 7.0))  # y = 1 + 2x
    assert line.slope == 2.0
    assert line.intercept == 1.0
    assert line.predict(10.0) == 21.0
    assert line.inverse(21.0) == 10.0


def test_pixel2_line_from_the_papers_stated_points():
    # §1: 2.3 Gbps at 50% CPU; §3.2: 84% CPU at 4 Gbps -> 20 %/Gbps, 4% intercept.
    line = Line.through((2.3, 50.0), (4.0, 84.0))
    assert math.isclose(line.slope, 20.0)
    assert math.isclose(line.intercept, 4.0)
    # §3.2 also says 1.6 Gbps needs "less than 50%": the line gives 36%.
    assert math.isclose(line.predict(1.6), 36.0)


def test_rog_line_from_the_papers_stated_points():
    # §3.2: 19% at 4 Gbps, 50% at 12.8 Gbps -> slope 31/8.8 %/Gbps.
    line = Line.through((4.0, 19.0), (12.8, 50.0))
    assert math.isclose(line.slope, 31 / 8.8)
    assert math.isclose(line.inverse(50.0), 12.8)
    assert line.predict(1.7) < 15.0  # "capped at less than 15% ... at 1.7 Gbps"


def test_vertical_and_flat_lines_are_refused():
    with pytest.raises(ValueError, match="same x"):
        Line.through((1.0, 2.0), (1.0, 3.0))
    with pytest.raises(ValueError, match="flat"):
        Line(slope=0.0, intercept=1.0).inverse(2.0)
