/*
 * settings_print: the settings beside a table (see settings_print.h).
 */
#include "h2o/settings_print.h"

#include "h2o/policy_settings.h"
#include "json_out.h"

void settings_print_text(FILE *out, const struct policy_settings *s)
{
	char line[512];
	if (*policy_settings_line(s, line, sizeof line))
		fprintf(out, "settings: %s (every other setting kvpress' default)\n", line);
}

void settings_print_json(FILE *out, const struct policy_settings *s)
{
	struct policy_setting_item items[POLICY_SETTINGS_MAX];
	const int n = policy_settings_list(s, items, POLICY_SETTINGS_MAX);
	if (n < 1)
		return;
	fputs(", \"settings\": {", out);
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		json_string(out, items[i].key);
		fputs(": ", out);
		if (items[i].number)
			fputs(items[i].value, out);
		else
			json_string(out, items[i].value);
	}
	fputc('}', out);
}

void settings_print_csv(FILE *out, const struct policy_settings *s)
{
	char line[512];
	if (*policy_settings_line(s, line, sizeof line))
		fprintf(out, "# settings: %s\n", line);
}
