/*
 * view_loading: the frame shown while a scene loads (design §9).
 *
 * The terminal puts its screen up before the scene is there: a model
 * scene runs its model as it loads, seconds or minutes. Until the app
 * exists, the screen is this frame, drawn from what the backend knows of
 * the load: the file, the phase it is in, how far it has come and since
 * when. Like view_draw it is a pure function of its input and the frame's
 * size, so the text backend prints the very frame the terminal shows.
 */
#ifndef H2O_VIEW_LOADING_H
#define H2O_VIEW_LOADING_H

#include <stdbool.h>

struct frame;

/* The phases of a load, in the order they come. */
enum view_load_phase {
	VIEW_LOAD_READING,    /* reading and checking the scene's files */
	VIEW_LOAD_TOKENIZING, /* a model scene: encoding its text */
	VIEW_LOAD_RUNNING,    /* a model scene: running its model over the text */
};

/* What a loading frame shows. */
struct view_loading {
	const char *file;           /* the scene's (or model's) file, as given */
	enum view_load_phase phase; /* the phase it is in */
	double fraction;            /* how much of the whole load is done, 0 to 1;
	                               negative when the load cannot tell */
	double elapsed;             /* seconds since the load began */
};

/* The phase of a load that told FRACTION of itself (scene.h's told: the
 * encoding first, the model's run after; negative: never told). */
enum view_load_phase view_load_phase_of(double fraction);

/* Draw L into F, the whole frame (F's ascii flag picks the glyphs). */
void view_loading_draw(const struct view_loading *l, struct frame *f);

#endif
