package tui

import "charm.land/lipgloss/v2"

// theme holds the styles. Colours are the 16 ANSI ones, so the screen works
// on any colour terminal and follows its palette; everything that carries
// meaning also shows without colour (NO_COLOR): the focused pane has a
// thick frame, the selected row a ">" and reverse video, states are words.
type theme struct {
	title, titleFocused     lipgloss.Style
	frame, frameFocused     lipgloss.Style
	colHeader               lipgloss.Style
	selected, selectedBlur  lipgloss.Style
	dim, bold               lipgloss.Style
	ok, warn, bad, info     lipgloss.Style
	badgeLive, badgePaused  lipgloss.Style
	badgeManual, badgeEnded lipgloss.Style
	badgeReplay, badgeWarn  lipgloss.Style
	tab, tabActive          lipgloss.Style
	spark                   lipgloss.Style
}

func newTheme() theme {
	s := lipgloss.NewStyle
	badge := func(c string) lipgloss.Style {
		return s().Bold(true).Reverse(true).Foreground(lipgloss.Color(c)).Padding(0, 1)
	}
	return theme{
		title:        s().Bold(true),
		titleFocused: s().Bold(true).Foreground(lipgloss.Color("6")),
		frame:        s().Foreground(lipgloss.Color("8")),
		frameFocused: s().Foreground(lipgloss.Color("6")),
		colHeader:    s().Bold(true).Underline(true),
		selected:     s().Reverse(true),
		selectedBlur: s().Bold(true),
		dim:          s().Faint(true),
		bold:         s().Bold(true),
		ok:           s().Foreground(lipgloss.Color("2")),
		warn:         s().Foreground(lipgloss.Color("3")),
		bad:          s().Foreground(lipgloss.Color("1")).Bold(true),
		info:         s().Foreground(lipgloss.Color("6")),
		badgeLive:    badge("2"),
		badgePaused:  badge("3"),
		badgeManual:  badge("5"),
		badgeEnded:   badge("1"),
		badgeReplay:  badge("4"),
		badgeWarn:    badge("1"),
		tab:          s().Padding(0, 1),
		tabActive:    s().Padding(0, 1).Bold(true).Reverse(true),
		spark:        s().Foreground(lipgloss.Color("4")),
	}
}
