"""Report writers: the JSON report's bug section, JUnit XML, SARIF 2.1.0 and a self-contained HTML page.

Every writer reads the JSON report (:func:`assay.reports.campaign.build_report`), so the
files of one run always agree with each other.

Layer: may import the engine and everything below it; never the promoter or a command.
"""
