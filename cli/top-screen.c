/*
 * The full screen of heaptool top (see top.h), drawn with ncurses: the
 * session, the totals, the RSS and growth, a line of status, the sites'
 * header, the sites (the selected one in reverse video, expanded stacks
 * under their sites) and the keys on the last line.  Everything is cut to
 * the terminal's width, so an 80x24 terminal over ssh shows it all but
 * the ends of long names; a resize redraws at the new size.
 */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "top-int.h"

/* Lines above the sites and below them. */
#define HEAD_LINES 5
#define FOOT_LINES 1
/* Frames shown of an expanded stack, at most. */
#define MAX_FRAMES 64

static SCREEN *screen;

int
ht_top_screen_open(void)
{
	if (screen != NULL)
		return 0;
	/* newterm, not initscr: initscr exits the process when the
	 * terminal cannot be used, where we would say why. */
	if ((screen = newterm(NULL, stdout, stdin)) == NULL)
		return -1;
	set_term(screen);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	/* Arrow keys come as escape sequences: wait little for their
	 * ends, so that Escape alone costs nothing noticeable either. */
	set_escdelay(25);
	curs_set(0);
	return 0;
}

void
ht_top_screen_close(void)
{
	if (screen == NULL)
		return;
	endwin();
	delscreen(screen);
	screen = NULL;
}

/* Line y of the screen: s cut to the width, the rest of the line cleared,
 * with attributes attr. */
static void
put_line(int y, const char *s, attr_t attr)
{
	int w = COLS;

	if (y < 0 || y >= LINES || w <= 0)
		return;
	move(y, 0);
	clrtoeol();
	if (attr != A_NORMAL)
		attron(attr);
	/* The last cell of the last line is never written: curses would
	 * scroll the screen to put the cursor after it. */
	addnstr(s, y == LINES - 1 ? w - 1 : w);
	if (attr != A_NORMAL) {
		/* A full-width bar for the header and the selection. */
		for (int x = (int)strlen(s); x < (y == LINES - 1 ? w - 1 : w);
		     x++)
			addch(' ');
		attroff(attr);
	}
}

static int
is_expanded(const struct ht_top_ui *ui, uint64_t id)
{
	size_t i;

	for (i = 0; i < ui->nexpanded; i++)
		if (ui->expanded[i] == id)
			return 1;
	return 0;
}

/* The index of the selected site: the one of the id chosen, else (it went
 * away) the one where it was; and ui follows it. */
static size_t
selected(const struct ht_top *t, struct ht_top_ui *ui)
{
	size_t i;

	if (t->nsites == 0)
		return 0;
	for (i = 0; i < t->nsites; i++)
		if (ui->selected != 0 && t->sites[i].id == ui->selected)
			break;
	if (i == t->nsites)
		i = ui->sel_index < t->nsites ? ui->sel_index : t->nsites - 1;
	ui->selected = t->sites[i].id;
	ui->sel_index = i;
	return i;
}

/* The lines of site i on the screen: its own and its expanded frames. */
static int
site_lines(struct ht_top *t, const struct ht_top_ui *ui, size_t i)
{
	const struct ht_sym_frame *fr;
	int n;

	if (!is_expanded(ui, t->sites[i].id))
		return 1;
	if ((n = ht_top_frames(t, &t->sites[i], &fr)) < 0)
		n = 0;
	return 1 + (n > MAX_FRAMES ? MAX_FRAMES : n);
}

void
ht_top_screen_draw(struct ht_top *t, struct ht_top_ui *ui)
{
	const struct ht_sym_frame *fr;
	char line[1024], fl[1024];
	size_t sel, i, at;
	int y, rows, k, n, first, last;

	if (screen == NULL)
		return;
	erase();
	rows = LINES - HEAD_LINES - FOOT_LINES;
	if (ht_top_view(t) == NULL) {
		put_line(0, "heaptool top: waiting for the first profile",
		    A_NORMAL);
		goto out_keys;
	}
	put_line(0, ht_top_session_line(t, line, sizeof(line)), A_BOLD);
	put_line(1, ht_top_totals_line(t, line, sizeof(line)), A_NORMAL);
	put_line(2, ht_top_growth_line(t, line, sizeof(line)), A_NORMAL);
	snprintf(line, sizeof(line), "%zu site%s by %s%s%s%s", t->nsites,
	    t->nsites == 1 ? "" : "s", ht_top_sort_name(t->sort),
	    ui->paused ? "  [PAUSED]" : "", ui->message != NULL ? "  " : "",
	    ui->message != NULL ? ui->message : "");
	put_line(3, line, ui->paused ? A_BOLD : A_NORMAL);
	put_line(4, ht_top_header(line, sizeof(line)), A_REVERSE);

	/* Scroll so that the selected site's line, and as much of its
	 * stack as fits, is on the screen. */
	sel = selected(t, ui);
	for (at = 0, i = 0; i < sel && i < t->nsites; i++)
		at += (size_t)site_lines(t, ui, i);
	if (rows > 0) {
		n = t->nsites > 0 ? site_lines(t, ui, sel) : 1;
		if (at < ui->scroll)
			ui->scroll = at;
		else if (at + (size_t)(n < rows ? n : 1) > ui->scroll + rows)
			ui->scroll = at + (size_t)(n < rows ? n : 1) - rows;
	}
	first = (int)ui->scroll;
	last = first + rows;
	y = 0;
	for (i = 0; i < t->nsites && y < last; i++) {
		if (y >= first) {
			ht_top_site_line(t, &t->sites[i], line, sizeof(line));
			/* Seen without reverse video too (a monochrome
			 * terminal, a capture of the screen's text). */
			if (i == sel)
				line[0] = '>';
			put_line(HEAD_LINES + y - first, line,
			    i == sel ? A_REVERSE : A_NORMAL);
		}
		y++;
		if (!is_expanded(ui, t->sites[i].id))
			continue;
		n = ht_top_frames(t, &t->sites[i], &fr);
		for (k = 0; k < n && k < MAX_FRAMES && y < last; k++, y++) {
			if (y < first)
				continue;
			snprintf(line, sizeof(line), "      %s",
			    ht_top_frame_line(&fr[k], fl, sizeof(fl)));
			put_line(HEAD_LINES + y - first, line, A_NORMAL);
		}
		if (n == 0 && y < last) {
			if (y >= first)
				put_line(HEAD_LINES + y - first,
				    "      (no frames)", A_NORMAL);
			y++;
		}
	}

out_keys:
	put_line(LINES - 1,
	    "q quit  i/g/a/s sort  j/k move  Enter stack  p pause  "
	    "b baseline",
	    A_REVERSE);
	refresh();
}

enum ht_top_key
ht_top_screen_key(int ms, const sigset_t *mask)
{
	struct timespec ts;
	struct pollfd p;
	int c;

	if (screen == NULL)
		return HT_TOP_KEY_NONE;
	nodelay(stdscr, TRUE);
	/* Keys curses has read already, and a resize it was told of, come
	 * before a wait. */
	if ((c = getch()) == ERR) {
		p.fd = STDIN_FILENO;
		p.events = POLLIN;
		p.revents = 0;
		ms = ms < 0 ? 0 : ms;
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		if (ppoll(&p, 1, &ts, mask) < 0 && errno != EINTR)
			return HT_TOP_KEY_NONE;
		/* A resize interrupts the poll (SIGWINCH): curses then
		 * says KEY_RESIZE. */
		c = getch();
	}
	switch (c) {
	case 'q':
	case 'Q':
		return HT_TOP_KEY_QUIT;
	case 'i':
		return HT_TOP_KEY_INUSE;
	case 'g':
		return HT_TOP_KEY_GROWTH;
	case 'a':
		return HT_TOP_KEY_ALLOC;
	case 's':
		return HT_TOP_KEY_SORT_NEXT;
	case 'k':
	case KEY_UP:
		return HT_TOP_KEY_UP;
	case 'j':
	case KEY_DOWN:
		return HT_TOP_KEY_DOWN;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case KEY_RIGHT:
	case KEY_LEFT:
		return HT_TOP_KEY_TOGGLE;
	case 'p':
	case ' ':
		return HT_TOP_KEY_PAUSE;
	case 'b':
		return HT_TOP_KEY_BASELINE;
	case KEY_RESIZE:
		return HT_TOP_KEY_RESIZE;
	default:
		return HT_TOP_KEY_NONE;
	}
}

void
ht_top_screen_move(struct ht_top *t, struct ht_top_ui *ui, int delta)
{
	size_t i;

	if (t->nsites == 0)
		return;
	i = selected(t, ui);
	if (delta < 0)
		i = i >= (size_t)-delta ? i - (size_t)-delta : 0;
	else
		i = i + (size_t)delta < t->nsites ? i + (size_t)delta :
						    t->nsites - 1;
	ui->selected = t->sites[i].id;
	ui->sel_index = i;
}

void
ht_top_screen_toggle(struct ht_top *t, struct ht_top_ui *ui)
{
	uint64_t id;
	size_t i;

	if (t->nsites == 0)
		return;
	id = t->sites[selected(t, ui)].id;
	for (i = 0; i < ui->nexpanded; i++)
		if (ui->expanded[i] == id) {
			ui->expanded[i] = ui->expanded[--ui->nexpanded];
			return;
		}
	/* The oldest gives way when too many are open. */
	if (ui->nexpanded == HT_TOP_MAX_EXPANDED) {
		memmove(ui->expanded, ui->expanded + 1,
		    (HT_TOP_MAX_EXPANDED - 1) * sizeof(*ui->expanded));
		ui->nexpanded--;
	}
	ui->expanded[ui->nexpanded++] = id;
}
