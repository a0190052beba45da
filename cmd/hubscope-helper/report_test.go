package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/app/report/pdftest"
	"github.com/hubscope/hubscope/ipc/schema"
)

// TestReportPDF analyses a small phantom with a confounds table (so the bundle has a cleaning
// report), writes its PDF with `report`, renders it with poppler and checks that the text a PDF
// reader extracts holds the bundle's own numbers: metrics.json's measures as printed (three
// decimals), the counts, the strongest hub's degree of hubs.tsv, the cleaning summary and the
// command that repeats the run.
func TestReportPDF(t *testing.T) {
	dir := t.TempDir()
	scan := filepath.Join(dir, "phantom.nii.gz")
	if code, _, stderr := runHelper(t, "synth", "--out", scan, "--voxel-mm", "12", "--length", "80", "--nuisance", "1"); code != 0 {
		t.Fatalf("synth: exit %d\n%s", code, stderr)
	}
	out := filepath.Join(dir, "bundle")
	confounds := filepath.Join(dir, "phantom_desc-confounds_timeseries.tsv")
	if code, _, stderr := runHelper(t, "run", scan, "--out", out, "--random", "2", "--density", "0.05", "--confounds", confounds); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	pdf := filepath.Join(dir, "report.pdf")
	if code, stdout, stderr := runHelper(t, "report", out, "--pdf", pdf); code != 0 || !strings.Contains(stdout, pdf) {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	text, pages := pdftest.Read(t, b)
	if pages < 1 || pages > 3 {
		t.Errorf("%d pages, want one to three", pages)
	}
	var m schema.Metrics
	readJSON(t, filepath.Join(out, "metrics.json"), &m)
	g := m.Global
	if g == nil || g.SmallWorld == nil || len(m.Modules) == 0 {
		t.Fatalf("metrics.json lacks the full measures: %+v", m)
	}
	// value finds the number printed after a row's name in the text (pdftotext -layout keeps a
	// table row on one line).
	value := func(row string) string {
		re := regexp.MustCompile(regexp.QuoteMeta(row) + `\s+(-?[0-9]+(?:\.[0-9]+)?)`)
		mm := re.FindStringSubmatch(text)
		if mm == nil {
			t.Errorf("the PDF's text has no row %q", row)
			return ""
		}
		return mm[1]
	}
	f3 := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for row, want := range map[string]string{
		"γ (normalised clustering)":                   f3(g.SmallWorld.Gamma),
		"σ (small-worldness)":                         f3(g.SmallWorld.Sigma),
		"C_p (clustering coefficient)":                f3(g.ClusteringCoefficient),
		"L_p (characteristic path length)":            f3(g.CharacteristicPathLength),
		"E_glob (global efficiency)":                  f3(g.GlobalEfficiency),
		"Q (modularity, " + m.Modules[0].Method + ")": f3(m.Modules[0].Q),
		"Edges": strconv.FormatInt(m.Network.Edges, 10),
		"Hubs":  strconv.Itoa(m.Hubs.Count),
	} {
		if got := value(row); got != "" && got != want {
			t.Errorf("%s: the PDF says %s, metrics.json %s", row, got, want)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("%d of %d in the mask", m.Scan.Nodes, m.Scan.MaskVoxels),
		fmt.Sprintf("%d × %d × %d voxels, %d volumes", m.Scan.Grid[0], m.Scan.Grid[1], m.Scan.Grid[2], m.Scan.TimePoints),
		"Cleaning and head motion", "Head motion: mean framewise displacement",
		"HubScope " + schema.Version,
		"Hubs in 3D", "Degree of the hubs over the anatomy",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the PDF's text lacks %q", want)
		}
	}
	// The command line (pdftotext breaks it where the PDF wraps it).
	cmd := "hubscope-helper run " + scan + " --out " + out + " --density 0.05 --random 2 --confounds " + confounds
	if !strings.Contains(strings.Join(strings.Fields(text), " "), cmd) {
		t.Errorf("the PDF's text lacks the command %q", cmd)
	}
	// The strongest hub: hubs.tsv's first row's degree is the hub table's first row's.
	hubs, err := os.ReadFile(filepath.Join(out, "hubs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(hubs), "\n")
	col := -1
	for i, h := range strings.Split(lines[0], "\t") {
		if h == "degree" {
			col = i
		}
	}
	if col < 0 || len(lines) < 2 {
		t.Fatalf("hubs.tsv: no degree column or no hub:\n%s", lines[0])
	}
	deg := strings.Split(lines[1], "\t")[col]
	if !regexp.MustCompile(`(?m)^\s*1 .*\s` + deg + `\s+[0-9.]+\s`).MatchString(text) {
		t.Errorf("the hub table's first row does not show degree %s (hubs.tsv)", deg)
	}
	if t.Failed() {
		t.Logf("the PDF's text:\n%s", text)
	}
}

// TestReportBadBundle: a folder that is no bundle is named in one line, and nothing is written.
func TestReportBadBundle(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runHelper(t, "report", dir, "--pdf", filepath.Join(dir, "r.pdf"))
	if code == 0 || !strings.Contains(stderr, "not a finished HubScope results bundle") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.pdf")); err == nil {
		t.Error("a report was written for a folder that is no bundle")
	}
}
