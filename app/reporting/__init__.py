"""Everything thinkloop reports, in one place.

A batch's report (`batch`) is built from the typed item summaries of `item_result`, with its data
helpers (`data`), paired comparisons (`comparisons`) and flaw tables (`flaws`), and is written as
Markdown/CSV (`text`, `formats`), HTML (`html`, `templates/`) and figures (`figures`). Beside it: the
judge-validity report (`validity`) and the THiNK paper's tables (`paper`). The statistics they
print are computed in `graphs/` (`statistics`, `agreement`, `paper_tables`, `validity_metrics`),
which knows no web framework or database. Reports read; nothing here writes to the database.
"""
