import matplotlib.pyplot as plt

from mobitrace.book.figures import save_svg


def test_svg_output_is_byte_identical_across_saves_synthetic(tmp_path):
    paths = []
    for name in ("a.svg", "b.svg"):
        fig, ax = plt.subplots()
        ax.plot([0, 1, 2], [1, 3, 2], label="synthetic")
        ax.legend()
        paths.append(save_svg(fig, tmp_path / "sub" / name))
        plt.close(fig)
    first, second = (p.read_bytes() for p in paths)
    assert first == second
    assert b"<dc:date>" not in first
