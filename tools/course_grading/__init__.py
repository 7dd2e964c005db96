"""The course's grading library: one implementation of reading ctest's results, scoring them
and writing every report (the grade workflow's summary, grade-submission's results.json, JUnit
and Markdown, grade-class's class.csv), the sandbox that student code runs in, and the handling
of submissions. Used by tools/grade-report, tools/grade-submission and tools/grade-class."""
