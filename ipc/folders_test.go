//go:build !js

package ipc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"reflect"
	"strings"
	"testing"
	"time"
)

// lister is the scripted service with result folders to list, and a Submit that opens one.
type lister struct {
	*scripted
	opened string
}

var listed = []ResultFolder{{ID: "folder/deriv/group/task-rest_desc-groupmean_hubscope", Root: FolderRootOpen,
	Name: "deriv/group/task-rest_desc-groupmean_hubscope", Kind: FolderGroup, Modified: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}}

func (l *lister) Folders(ctx context.Context) ([]ResultFolder, error) { return listed, nil }

func (l *lister) FolderTable(ctx context.Context, id, name string) ([]byte, error) {
	if id != "folder/deriv" || name != "measures.tsv" {
		return nil, Errorf(CodeNotFound, "no %s in %s", name, id)
	}
	return []byte("participant_id\trun\nsub-01\tsub-01_task-rest\n"), nil
}

func (l *lister) Submit(ctx context.Context, req JobRequest) (Job, error) {
	if req.OpenFolder != "" {
		l.opened = req.OpenFolder
		return Job{ID: "j9", Name: "opened", State: JobDone}, nil
	}
	return l.scripted.Submit(ctx, req)
}

// GET /folders is served to the browser app's own requests with the cookie, as the other
// routes: refused without it (401) and from another site (403); a result folder opens by its
// ID over the web transport, a path still does not; a service that lists none answers 404.
func TestFolders(t *testing.T) {
	svc := &lister{scripted: newScripted()}
	srv := startServer(t, svc, ServerOptions{NoSocket: true, Web: "127.0.0.1:0"})
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(srv.TokenURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Request.Cookies() {
		if strings.HasPrefix(c.Name, tokenCookie) {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("the token URL set no cookie")
	}
	get := func(cookie *http.Cookie, site string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.WebURL()+Prefix+"/folders", nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, b := get(cookie, "same-origin")
	var got []ResultFolder
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || len(got) != 1 || !reflect.DeepEqual(got[0], listed[0]) {
		t.Fatalf("GET /folders with the cookie: %s %s", resp.Status, b)
	}
	for _, c := range []struct {
		name   string
		cookie *http.Cookie
		site   string
		want   int
	}{
		{"without the cookie", nil, "same-origin", 401},
		{"with a wrong cookie", &http.Cookie{Name: cookie.Name, Value: "guess"}, "same-origin", 401},
		{"from another site with the cookie", cookie, "cross-site", 403},
		{"from a sibling port with the cookie", cookie, "same-site", 403},
	} {
		if resp, _ := get(c.cookie, c.site); resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.name, resp.Status, c.want)
		}
	}

	// The client (bearer token), as the browser app's.
	c := NewWebClient(srv.WebURL(), srv.Token())
	defer c.Close()
	if fs, err := c.Folders(context.Background()); err != nil || len(fs) != 1 || fs[0].ID != listed[0].ID {
		t.Fatalf("Client.Folders: %v %v", fs, err)
	}
	if j, err := c.Submit(context.Background(), JobRequest{OpenFolder: listed[0].ID}); err != nil || j.ID != "j9" || svc.opened != listed[0].ID {
		t.Errorf("open_folder over the web: %+v %v (opened %q)", j, err, svc.opened)
	}
	if _, err := c.Submit(context.Background(), JobRequest{Open: "/data/deriv/group"}); !IsCode(err, CodeForbidden) {
		t.Errorf("open by path over the web: %v, want forbidden", err)
	}

	// A cohort folder's table, by its ID: the names a client may ask for only.
	if b, err := c.FolderTable(context.Background(), "folder/deriv", "measures.tsv"); err != nil || !strings.HasPrefix(string(b), "participant_id\trun\n") {
		t.Errorf("FolderTable: %q %v", b, err)
	}
	for _, name := range []string{"../provenance.json", "cohort_complete.json", ""} {
		if _, err := c.FolderTable(context.Background(), "folder/deriv", name); !IsCode(err, CodeBadRequest) {
			t.Errorf("table %q: %v, want bad request", name, err)
		}
	}
	req, _ := http.NewRequest("GET", srv.WebURL()+Prefix+"/folders/table?id=folder/deriv&name=measures.tsv", nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("table without the cookie: %s, want 401", resp.Status)
	}

	plain := startServer(t, newScripted(), ServerOptions{NoSocket: true, Web: "127.0.0.1:0"})
	pc := NewWebClient(plain.WebURL(), plain.Token())
	defer pc.Close()
	if _, err := pc.Folders(context.Background()); !IsCode(err, CodeNotFound) {
		t.Errorf("a service without folders: %v, want not found", err)
	}
}
