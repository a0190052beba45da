package report

import (
	"bytes"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/app/report/pdftest"
)

func TestPDFReport(t *testing.T) {
	r := Report{Summary: sampleSummary(), Created: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC),
		Figures: []Figure{{Title: "Hubs in 3D", PNG: samplePNG(t, color.RGBA{200, 0, 0, 255})}, {Title: "Degree over the mean EPI", PNG: samplePNG(t, color.RGBA{0, 0, 200, 255})}},
		Command: "hubscope-helper run scan.nii.gz --out res --measure spearman"}
	var b bytes.Buffer
	if err := WritePDF(&b, r); err != nil {
		t.Fatal(err)
	}
	text, pages := pdftest.Read(t, b.Bytes())
	if pages < 1 || pages > 3 {
		t.Errorf("%d pages, want 1 to 3", pages)
	}
	for _, want := range []string{"σ (small-worldness)", "5.313", "366154", "Frontal_Mid_L", "hubscope-helper run scan.nii.gz"} {
		if !strings.Contains(text, want) {
			t.Errorf("the PDF's text lacks %q", want)
		}
	}
}
