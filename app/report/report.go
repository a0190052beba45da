package report

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/png"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Figure is one image of the report, PNG-encoded.
type Figure struct {
	Title string
	PNG   []byte
}

// Report is what one page says about one finished analysis.
type Report struct {
	Summary ipc.Summary
	Metrics *Metrics // parsed Summary.Metrics
	Mask    string   // the user's mask file, "" for the automatic mask
	Figures []Figure // 3D view, a slice, the degree distribution …
	// MaxHubs bounds the hub rows printed (default 25); the full table is hubs.tsv.
	MaxHubs int
	Created time.Time
	// QC is the cleaning and head-motion assessment of qc/denoise.json (nil when the series
	// were not cleaned).
	QC *Assessment
	// Norm is the comparison with a normative cohort of norm.json (nil without one).
	Norm *NormComparison
	// Command is the command line that repeats the analysis (Command; "" when unknown).
	Command string
}

type pageModule struct {
	Number, Size int
	Colour       string
	Share        string
}

type page struct {
	Title, Version, Created, Backend, Bundle string
	Scan                                     []Setting
	Settings                                 []Setting
	Measures                                 []Measure
	Figures                                  []pageFigure
	Modules                                  []pageModule
	ModuleMethod                             string
	Hubs                                     []ipc.Hub
	HubNote                                  string
	AtlasName, AtlasCitation                 string
	QC, QCWarnings                           []string
	Norm                                     []string
	NormClusters                             []NormCluster
	Command                                  string
}

type pageFigure struct {
	Title string
	Src   template.URL
	PNG   []byte
}

// Write writes the report as one self-contained XHTML-compatible HTML5 page.
func Write(w io.Writer, r Report) error {
	p, err := build(r)
	if err != nil {
		return err
	}
	return pageTemplate.Execute(w, p)
}

// build is the one reading of a report that both the HTML page (Write) and the PDF (WritePDF)
// print, so the two never say different things.
func build(r Report) (page, error) {
	if r.Metrics == nil {
		m, err := ParseMetrics(r.Summary.Metrics)
		if err != nil {
			return page{}, fmt.Errorf("report for %s: %w", r.Summary.Job.Name, err)
		}
		r.Metrics = m
	}
	if r.MaxHubs <= 0 {
		r.MaxHubs = 25
	}
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	m := r.Metrics
	p := page{
		Title:    r.Summary.Job.Name,
		Version:  schema.Version,
		Created:  r.Created.Format("2 January 2006, 15:04"),
		Bundle:   r.Summary.Bundle,
		Settings: DescribeSettings(r.Summary.Job.Settings, r.Mask),
		Measures: m.GlobalMeasures(),
	}
	if p.Title == "" {
		p.Title = filepath.Base(m.Scan.Path)
	}
	p.Backend = m.Network.Backend
	if m.Network.Device != "" {
		p.Backend += " (" + m.Network.Device + ")"
	}
	tr := "unknown"
	if m.Scan.TR > 0 {
		tr = fmt.Sprintf("%g s", m.Scan.TR)
	}
	p.Scan = []Setting{
		{"File", filepath.Base(m.Scan.Path)},
		{"Grid", fmt.Sprintf("%d × %d × %d voxels, %d volumes, TR %s", m.Scan.Grid[0], m.Scan.Grid[1], m.Scan.Grid[2], m.Scan.TimePoints, tr)},
		{"Voxels analysed", fmt.Sprintf("%d of %d in the mask (%d constant, %d with invalid values left out)", m.Scan.Nodes, m.Scan.MaskVoxels, m.Scan.ZeroVariance, m.Scan.NonFinite)},
		{"Threshold used", m.thresholdWords()},
		{"Connectivity", fmt.Sprintf("%d isolated voxels; the largest connected part holds %d voxels", m.Network.Isolated, m.Network.LargestComponent)},
	}
	for _, f := range r.Figures {
		if _, err := png.DecodeConfig(bytes.NewReader(f.PNG)); err != nil {
			return page{}, fmt.Errorf("report figure %q: not a PNG image: %w", f.Title, err)
		}
		// The data URI is built here from bytes checked to be PNG, so it is safe to mark as URL.
		p.Figures = append(p.Figures, pageFigure{f.Title, template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG)), f.PNG})
	}
	if len(m.Modules) > 0 {
		p.ModuleMethod = m.Modules[0].Method
		total := 0
		for _, s := range m.Modules[0].Sizes {
			total += s
		}
		for i, s := range m.Modules[0].Sizes {
			c := ModuleColor(i + 1)
			p.Modules = append(p.Modules, pageModule{Number: i + 1, Size: s, Colour: fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B),
				Share: fmt.Sprintf("%.1f %%", 100*float64(s)/float64(max(total, 1)))})
		}
	}
	p.Hubs = r.Summary.Hubs
	if len(p.Hubs) > r.MaxHubs {
		p.HubNote = fmt.Sprintf("The %d strongest of %d hubs; the full table is hubs.tsv in the results folder.", r.MaxHubs, len(p.Hubs))
		p.Hubs = p.Hubs[:r.MaxHubs]
	}
	if a := r.Summary.Atlas; a != nil {
		p.AtlasName, p.AtlasCitation = a.Name, a.Citation
	}
	if r.QC != nil {
		p.QC, p.QCWarnings = r.QC.Lines(), r.QC.Warnings
	}
	if r.Norm != nil {
		p.Norm, p.NormClusters = r.Norm.Lines(), r.Norm.Clusters
		if n := len(r.Norm.Clusters); n > MaxNormClusters {
			// A scan far from its cohort has hundreds of clusters: the largest fit the pages.
			p.NormClusters = slices.Clone(r.Norm.Clusters)
			slices.SortStableFunc(p.NormClusters, func(a, b NormCluster) int { return cmp.Compare(b.Voxels, a.Voxels) })
			p.NormClusters = p.NormClusters[:MaxNormClusters]
			p.Norm = append(p.Norm, fmt.Sprintf("The %d largest clusters are listed; norm_clusters.tsv holds all %d.", MaxNormClusters, n))
		}
	}
	p.Command = r.Command
	return p, nil
}

// MaxNormClusters is how many clusters of the norm comparison the report lists.
const MaxNormClusters = 10

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"f1":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"mm":  func(v [3]float64) string { return fmt.Sprintf("%.0f, %.0f, %.0f", v[0], v[1], v[2]) },
	"inc": func(i int) int { return i + 1 },
}).Parse(`<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8"/>
<title>HubScope report: {{.Title}}</title>
<style>
body{font-family:sans-serif;font-size:10pt;margin:1.5em;color:#222}
h1{font-size:15pt;margin:0 0 .2em}h2{font-size:11pt;margin:.9em 0 .3em;border-bottom:1px solid #ccc}
table{border-collapse:collapse}td,th{padding:1px 6px;text-align:left;vertical-align:top}
th{background:#eee}.num{text-align:right}.figs{display:flex;gap:8px;flex-wrap:wrap}
figure{margin:0}img{max-width:300px;max-height:240px;border:1px solid #ccc}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px;border:1px solid #555}
.small{color:#555;font-size:8.5pt}.warn{color:#b00;font-weight:bold}
pre{white-space:pre-wrap;font-size:8.5pt;background:#f4f4f4;padding:4px}
@media print{body{margin:0}}
</style>
</head>
<body>
<h1>HubScope report: {{.Title}}</h1>
<p class="small">Functional brain network of a resting-state fMRI scan, voxel by voxel. Made {{.Created}} with HubScope {{.Version}} ({{.Backend}}). Results folder: <code>{{.Bundle}}</code></p>
<h2>Scan</h2>
<table id="scan">{{range .Scan}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<h2>Settings</h2>
<table id="settings">{{range .Settings}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{if .Figures}}<h2>Figures</h2>
<div class="figs">{{range .Figures}}<figure><img src="{{.Src}}" alt="{{.Title}}"/><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>{{end}}
{{if .QC}}<h2>Cleaning and head motion</h2>
<ul id="qc">{{range .QC}}<li>{{.}}</li>{{end}}</ul>{{range .QCWarnings}}<p class="warn">{{.}}</p>{{end}}{{end}}
<h2>Global measures</h2>
<table id="measures">{{range .Measures}}<tr><th>{{.Name}}</th><td class="num">{{.Value}}</td><td class="small">{{.Meaning}}</td></tr>{{end}}</table>
{{if .Modules}}<h2>Modules ({{.ModuleMethod}})</h2>
<table id="modules"><tr><th>Module</th><th>Voxels</th><th>Share</th></tr>{{range .Modules}}<tr><td><span class="sw" style="background:{{.Colour}}"></span>{{.Number}}</td><td class="num">{{.Size}}</td><td class="num">{{.Share}}</td></tr>{{end}}</table>{{end}}
<h2>Hubs</h2>
<table id="hubs"><tr><th>#</th><th>Region</th><th>MNI x, y, z (mm)</th><th>Degree</th><th>Hub z</th><th>Module</th><th>Role</th></tr>{{range $i, $h := .Hubs}}<tr><td class="num">{{inc $i}}</td><td>{{if $h.Region}}{{$h.Region}}{{else}}outside the atlas{{end}}</td><td>{{mm $h.MNI}}</td><td class="num">{{$h.Degree}}</td><td class="num">{{f1 $h.HubZ}}</td><td class="num">{{if $h.Module}}{{$h.Module}}{{end}}</td><td>{{$h.Role}}</td></tr>{{end}}</table>
{{if .HubNote}}<p class="small">{{.HubNote}}</p>{{end}}
{{if .Norm}}<h2>Against the normative cohort</h2>
<ul id="norm">{{range .Norm}}<li>{{.}}</li>{{end}}</ul>{{if .NormClusters}}
<table id="norm-clusters"><tr><th>#</th><th>Degree</th><th>Voxels</th><th>Peak z</th><th>MNI x, y, z (mm)</th><th>Region</th></tr>{{range $i, $c := .NormClusters}}<tr><td class="num">{{inc $i}}</td><td>{{$c.Direction}}</td><td class="num">{{$c.Voxels}}</td><td class="num">{{f2 $c.PeakZ}}</td><td>{{mm $c.PeakMM}}</td><td>{{if $c.Region}}{{$c.Region}}{{else}}outside the atlas{{end}}</td></tr>{{end}}</table>{{end}}{{end}}
{{if .Command}}<h2>To repeat this analysis</h2>
<pre id="command">{{.Command}}</pre>{{end}}
<p class="small">{{if .AtlasName}}Regions: {{.AtlasName}}. {{.AtlasCitation}}. {{end}}γ, λ, σ against degree-preserving random networks (Maslov &amp; Sneppen 2002; Humphries et al. 2008). HubScope {{.Version}}. For research use; not a diagnosis.</p>
</body>
</html>
`))
