package report

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
)

//go:embed report.html.tmpl
var htmlSource string

// htmlPage is parsed once; a template is safe for concurrent use.
var htmlPage = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"dataURI": func(png []byte) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
	},
}).Parse(htmlSource))

// html renders the page as one self-contained HTML document: inline CSS,
// figures as data URIs, no script and nothing fetched from the network.
func (p *page) html() ([]byte, error) {
	var b bytes.Buffer
	if err := htmlPage.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("report: render HTML: %w", err)
	}
	return b.Bytes(), nil
}
