"""Human ratings for Table 2: ``study`` (the blinded shared sample, each annotator's ratings on
disk, the export the report reads) and ``server`` (the local rating page, ``page.html``)."""
