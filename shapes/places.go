package shapes

// Request shapes of the place-photo application around discovery: views,
// history, publishing, reactions, transfers and uploads. Unknown keys are
// ignored (the document states no additional-property rule for them).

// PoiViewRequest asks for a rendered view of a place. Framing values are
// strings ("90", not 90), as the document lists them next to "auto".
type PoiViewRequest struct {
	SearchID string  `json:"searchId" validate:"required,min=1,max=80"`
	PoiID    string  `json:"poiId" validate:"required,min=1,max=500"`
	Heading  float64 `json:"heading" validate:"required,gte=0,lt=360"`
	Pitch    float64 `json:"pitch" validate:"required,gte=-90,lte=90"`
	Fov      float64 `json:"fov" validate:"required,gte=30,lte=120"`
	Scope    string  `json:"scope" validate:"oneof=place selfie"`
	Framing  string  `json:"framing" validate:"oneof=auto current 90 60 45"`
}

// SetDefaults sets the documented defaults.
func (r *PoiViewRequest) SetDefaults() { *r = PoiViewRequest{Scope: "place", Framing: "current"} }

// HiddenPoiRequest hides or shows a place in a search.
type HiddenPoiRequest struct {
	SearchID string `json:"searchId" validate:"required,min=1,max=80"`
	PoiID    string `json:"poiId" validate:"required,min=1,max=500"`
	Hidden   bool   `json:"hidden"` // default true
}

// SetDefaults sets the documented defaults.
func (r *HiddenPoiRequest) SetDefaults() { *r = HiddenPoiRequest{Hidden: true} }

// HistoryItem is one saved search of a user's history. Result is an open
// JSON object.
type HistoryItem struct {
	ID      string         `json:"id" validate:"required,min=1,max=80,historyid"`
	Created int            `json:"created" validate:"required,gte=0"`
	Label   string         `json:"label" validate:"required,max=1000"`
	Radius  int            `json:"radius" validate:"required,gte=100,lte=20000"`
	Checked bool           `json:"checked"` // default true
	Result  map[string]any `json:"result" validate:"required"`
}

// SetDefaults sets the documented defaults.
func (h *HistoryItem) SetDefaults() { *h = HistoryItem{Checked: true} }

// PublishRequest publishes a search, a place or a photo.
type PublishRequest struct {
	Kind  string  `json:"kind" validate:"required,oneof=search place photo"`
	ID    string  `json:"id" validate:"required,min=1,max=80"`
	PoiID *string `json:"poiId" validate:"omitnil,max=500"` // default null
}

// RemovedItemRequest removes or restores a search or a portrait.
type RemovedItemRequest struct {
	Kind    string `json:"kind" validate:"required,oneof=search portrait"`
	ID      string `json:"id" validate:"required,min=1,max=80"`
	Removed bool   `json:"removed"` // default true
}

// SetDefaults sets the documented defaults.
func (r *RemovedItemRequest) SetDefaults() { *r = RemovedItemRequest{Removed: true} }

// ReactionRequest sets or clears a like or a favourite.
type ReactionRequest struct {
	Kind   string `json:"kind" validate:"required,oneof=like favorite"`
	Active bool   `json:"active" validate:"required"`
	PoiID  string `json:"poiId" validate:"max=500"` // default ""
}

// CommentRequest posts a comment.
type CommentRequest struct {
	Text  string `json:"text" validate:"required,min=1,max=2000"`
	PoiID string `json:"poiId" validate:"max=500"` // default ""
}

// WithdrawRequest withdraws a published item.
type WithdrawRequest struct {
	ID string `json:"id" validate:"required,min=1,max=80"`
}

// ThumbnailRequest asks for thumbnails of source URLs.
type ThumbnailRequest struct {
	SourceURLs []string `json:"sourceUrls" validate:"required,max=24"`
}

// TransferRequest hands a session over to another device.
type TransferRequest struct {
	State  string `json:"state" validate:"required,min=32,max=128"`
	Ticket string `json:"ticket" validate:"max=128"` // default ""
}

// LicenseRequest submits a licence number.
type LicenseRequest struct {
	LicenseNumber string `json:"licenseNumber" validate:"required,min=1,max=8"`
}

// AvatarUpload uploads an avatar image (encoded as a string).
type AvatarUpload struct {
	Name  string `json:"name" validate:"required,min=1,max=80"`
	Image string `json:"image" validate:"required,max=28000000"`
}
