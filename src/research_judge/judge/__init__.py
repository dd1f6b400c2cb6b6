"""Stage 2, the judge: prompts, wire models, evidence checks, ratios, the verdict policy, and the
grader that runs one session's two calls. Import from the submodules; this package re-exports
nothing so that ``results`` can use ``judge.verdicts`` without loading the grader."""
