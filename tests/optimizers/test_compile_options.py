"""CompileOptions: `compile_program` takes its settings as one object, as keywords (as before), or
both; a keyword that is no setting is refused by name before any work."""

import pytest
from compile_testing import scripted_lm

from rbdspy.optimizers import CompileOptions, compile_program


def test_a_misspelt_setting_is_named_before_any_work(data_files, tmp_path):
    train, dev = data_files
    with pytest.raises(TypeError, match="compile_program\\(\\) got an unexpected keyword argument 'budgt'"):
        compile_program("judge", "labeled", [train], [dev], out_dir=tmp_path / "out", budgt=3)
    with pytest.raises(TypeError, match="takes its options as a CompileOptions; got dict"):
        compile_program("judge", "labeled", [train], [dev], {"budget": 3}, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_options_object_compiles_what_its_keywords_compile(data_files, tmp_path, mlflow_store):
    train, dev = data_files
    settings = {"design": "rationale", "max_demos": 1, "log_model": False, "display_progress": False}
    by_keywords = compile_program(
        "judge", "labeled", [train], [dev], out_dir=tmp_path / "a", lm=scripted_lm(), **settings
    )
    options = CompileOptions(**settings, seed=5)
    by_object = compile_program(
        "judge", "labeled", [train], [dev], options, out_dir=tmp_path / "b", lm=scripted_lm(), seed=0
    )
    assert by_object.path.read_text() == by_keywords.path.read_text()
    assert by_object.after.metrics == by_keywords.after.metrics
