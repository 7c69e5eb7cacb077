/*
 * plot_write: --plot's file and its line on stderr (see plot_write.h).
 */
#include "plot_write.h"

#include <stdio.h>

#include "h2o/plot.h"
#include "options.h"

int plot_write(const char *path, bool quiet, int smooth, const struct report_run *run,
               const struct drop_result *drop, const struct report_sweep *sweep,
               const struct drop_sweep *model)
{
	char err[256];
	struct plot_info info;
	const struct plot_options opt = {.smooth = smooth};
	const int rc = run ? plot_report(run, drop, &opt, path, &info, err, sizeof err)
	                   : plot_sweep(sweep, model, path, &info, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "h2o-tui: %s: %s\n", path, err);
		return EXIT_WRITE;
	}
	const int panels = info.panels - (info.model_curves > 0);
	if (!quiet && info.model_curves > 0)
		fprintf(stderr,
		        "h2o-tui: wrote %s: %d panel%s of %d curves, one per policy, and the "
		        "model's %s, %d curves, one per policy run on the model\n",
		        path, panels, panels == 1 ? "" : "s", info.curves,
		        run ? "log-probability lost over the steps"
		            : "perplexity against the budget",
		        info.model_curves);
	else if (!quiet)
		fprintf(stderr, "h2o-tui: wrote %s: %d panel%s of %d curves, one per policy\n",
		        path, panels, panels == 1 ? "" : "s", info.curves);
	return 0;
}
