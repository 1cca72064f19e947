package shapes

// The shapes of place-photo discovery (niche document, "Additional
// shapes"). No operation of the documents uses them yet; they are decoded
// and validated exactly like the others so that a host can serve them.

// DefaultPreferences is ExploreRequest.Preferences when the caller omits it.
const DefaultPreferences = "Scenic, distinctive public places for photography"

// TagFilter matches one OSM tag (no extra properties).
type TagFilter struct {
	Key      string  `json:"key" validate:"required,min=1,max=80,tagkey"`
	Value    *string `json:"value" validate:"omitnil,max=160"` // default null
	Required bool    `json:"required"`                         // default true
}

// SetDefaults sets the documented defaults.
func (f *TagFilter) SetDefaults() { *f = TagFilter{Required: true} }

// NumericFilter bounds one numeric OSM tag (no extra properties).
type NumericFilter struct {
	Key     string   `json:"key" validate:"required,min=1,max=80,tagkey"`
	Minimum *float64 `json:"minimum" validate:"omitnil"` // default null
	Maximum *float64 `json:"maximum" validate:"omitnil"` // default null
}

// OSMFeatureQuery selects OSM features (no extra properties).
// SelectionHints are soft candidate priorities, never hard constraints.
type OSMFeatureQuery struct {
	Label           string          `json:"label" validate:"required,min=1,max=120"`
	Kind            string          `json:"kind" validate:"oneof=tagged intersection"`
	Filters         []TagFilter     `json:"filters" validate:"max=6"`
	NumericFilters  []NumericFilter `json:"numericFilters" validate:"max=4"`
	ProximityMeters int             `json:"proximityMeters" validate:"gte=0,lte=500"`
	SelectionHints  []string        `json:"selectionHints" validate:"max=3,dive,oneof=large-footprint small-footprint more-storeys"`
}

// SetDefaults sets the documented defaults.
func (q *OSMFeatureQuery) SetDefaults() {
	*q = OSMFeatureQuery{Kind: "tagged", Filters: []TagFilter{}, NumericFilters: []NumericFilter{},
		ProximityMeters: 150, SelectionHints: []string{}}
}

// Requirement is one condition of a search, an English expression that
// keeps its AND/OR/NOT grouping (no extra properties). StepIDs name the
// retrieval steps that implement it (empty for shared visual requirements).
type Requirement struct {
	Expression string   `json:"expression" validate:"required,min=1,max=400"`
	Strength   string   `json:"strength" validate:"required,oneof=required preferred forbidden"`
	Route      string   `json:"route" validate:"required,oneof=places geography features visual"`
	Evidence   string   `json:"evidence" validate:"oneof=visual spatial provider combined"`
	StepIDs    []string `json:"stepIds" validate:"required,max=8"`
}

// SetDefaults sets the documented defaults.
func (r *Requirement) SetDefaults() { *r = Requirement{Evidence: "visual"} }

// SearchStep is one step of a SearchProgram (no extra properties).
type SearchStep struct {
	ID              string            `json:"id" validate:"required,stepid"`
	Tool            string            `json:"tool" validate:"required,oneof=search_places search_geography search_features sample_geography sample_near_places feature_points filter_geography filter_features union intersection area_imagery point_imagery center_imagery collect_images score_images rank_results"`
	Inputs          []string          `json:"inputs" validate:"max=6"`
	Queries         []string          `json:"queries" validate:"max=4"`
	GeographicKinds []string          `json:"geographicKinds" validate:"max=6,dive,oneof=lake sea river peak forest waterside"`
	OSMFeatures     []OSMFeatureQuery `json:"osmFeatures" validate:"max=6"`
	Combination     string            `json:"combination" validate:"oneof=all any"`
	Exclude         bool              `json:"exclude"`
	DiscoveryHints  bool              `json:"discoveryHints"`
	Weights         []int             `json:"weights" validate:"max=6"`
	VisualIntent    string            `json:"visualIntent" validate:"max=1000"`
	RadiusMeters    int               `json:"radiusMeters" validate:"gte=100,lte=2000"`
}

// SetDefaults sets the documented defaults.
func (s *SearchStep) SetDefaults() {
	*s = SearchStep{Inputs: []string{}, Queries: []string{}, GeographicKinds: []string{},
		OSMFeatures: []OSMFeatureQuery{}, Combination: "all", Weights: []int{}, RadiusMeters: 750}
}

// SearchProgram is an explicit retrieval plan (no extra properties).
type SearchProgram struct {
	Steps  []SearchStep `json:"steps" validate:"required,min=1,max=24"`
	Output string       `json:"output" validate:"required,min=1,max=40"`
}

// SearchBranch is one alternative of a search (no extra properties).
type SearchBranch struct {
	PoiQueries            []string          `json:"poiQueries" validate:"max=4"`
	GeographicKinds       []string          `json:"geographicKinds" validate:"max=6,dive,oneof=lake sea river peak forest waterside"`
	GeographicCombination string            `json:"geographicCombination" validate:"oneof=all any"`
	OSMFeatures           []OSMFeatureQuery `json:"osmFeatures" validate:"max=6"`
	FeatureCombination    string            `json:"featureCombination" validate:"oneof=all any"`
	VisualIntent          string            `json:"visualIntent" validate:"max=1000"`
}

// SetDefaults sets the documented defaults.
func (b *SearchBranch) SetDefaults() {
	*b = SearchBranch{PoiQueries: []string{}, GeographicKinds: []string{}, GeographicCombination: "all",
		OSMFeatures: []OSMFeatureQuery{}, FeatureCombination: "all"}
}

// RouteEndpoint is one end of a route: a free-text query, coordinates, or
// both (no extra properties; every field may be null and defaults to null).
type RouteEndpoint struct {
	Query *string  `json:"query" validate:"omitnil,min=1,max=200"`
	Lat   *float64 `json:"lat" validate:"omitnil,gte=-85,lte=85"`
	Lon   *float64 `json:"lon" validate:"omitnil,gte=-180,lte=180"`
	Label *string  `json:"label" validate:"omitnil,max=350"`
}

// RouteRequest searches along a route (no extra properties).
// CorridorMeters is the maximum distance from the route, not a circle
// search radius.
type RouteRequest struct {
	Origin         *RouteEndpoint `json:"origin" validate:"omitnil"` // default null
	Destination    RouteEndpoint  `json:"destination" validate:"required"`
	TravelMode     string         `json:"travelMode" validate:"oneof=walk drive"`
	CorridorMeters int            `json:"corridorMeters" validate:"gte=50,lte=2000"`
}

// SetDefaults sets the documented defaults.
func (r *RouteRequest) SetDefaults() { *r = RouteRequest{TravelMode: "walk", CorridorMeters: 50} }

// ExploreRequest asks for photo places around a point or along a route.
// The document states no additional-property rule: unknown keys are
// ignored. Limit is deprecated and ignored (every verified result is
// returned). Nullable fields are the ones the document marks "or null":
// Route, SearchProgram, PhotoStyles, Categories, SelectedPoiIDs and
// PoiCatalogToken (a nil slice means null); the other arrays default to
// empty and reject null, as a Pydantic model with default_factory=list
// would.
type ExploreRequest struct {
	Lat                   float64           `json:"lat" validate:"required,gte=-85,lte=85"`
	Lon                   float64           `json:"lon" validate:"required,gte=-180,lte=180"`
	Route                 *RouteRequest     `json:"route" validate:"omitnil"`
	SearchProgram         *SearchProgram    `json:"searchProgram" validate:"omitnil"`
	SearchBranches        []SearchBranch    `json:"searchBranches" validate:"max=6"`
	Query                 string            `json:"query" validate:"max=1000"`
	Radius                int               `json:"radius" validate:"gte=100,lte=20000"`
	Limit                 int               `json:"limit" validate:"gte=1,lte=5" shapes:"deprecated"`
	PhotoStyles           []string          `json:"photoStyles" validate:"omitnil,min=1,max=8,dive,oneof=nature urban vintage iconic artistic waterside minimal adventure"`
	Categories            []string          `json:"categories" validate:"omitnil,min=1,max=8,dive,oneof=viewpoint park attraction museum artwork historic nature recreation cafe restaurant bar shop"`
	PoiQueries            []string          `json:"poiQueries" validate:"max=4,dive,min=1,max=200"`
	GeographicCombination string            `json:"geographicCombination" validate:"oneof=all any"`
	FeatureCombination    string            `json:"featureCombination" validate:"oneof=all any"`
	OSMFeatures           []OSMFeatureQuery `json:"osmFeatures" validate:"max=6"`
	GeographicKinds       []string          `json:"geographicKinds" validate:"max=6,dive,oneof=lake sea river peak forest waterside"`
	Requirements          []Requirement     `json:"requirements" validate:"max=16"`
	SubjectRole           string            `json:"subjectRole" validate:"oneof=scene portrait-background existing-subject"`
	ScoringIntent         string            `json:"scoringIntent" validate:"max=1000"`
	SelectedPoiIDs        []string          `json:"selectedPoiIds" validate:"omitnil,max=50"`
	PoiCatalogToken       *string           `json:"poiCatalogToken" validate:"omitnil,max=40000"`
	Preferences           string            `json:"preferences" validate:"max=500"`
}

// SetDefaults sets the documented defaults.
func (r *ExploreRequest) SetDefaults() {
	*r = ExploreRequest{SearchBranches: []SearchBranch{}, Radius: 1000, Limit: 3, PoiQueries: []string{},
		GeographicCombination: "all", FeatureCombination: "all", OSMFeatures: []OSMFeatureQuery{},
		GeographicKinds: []string{}, Requirements: []Requirement{}, SubjectRole: "scene",
		Preferences: DefaultPreferences}
}

// SearchTaskRequest has exactly the fields of ExploreRequest.
type SearchTaskRequest ExploreRequest

// SetDefaults sets the documented defaults (those of ExploreRequest).
func (r *SearchTaskRequest) SetDefaults() { (*ExploreRequest)(r).SetDefaults() }

// IntentRequest asks for the interpretation of a free-text search. Unknown
// keys are ignored. Limit is deprecated and ignored.
type IntentRequest struct {
	Lat                   float64           `json:"lat" validate:"required,gte=-85,lte=85"`
	Lon                   float64           `json:"lon" validate:"required,gte=-180,lte=180"`
	Route                 *RouteRequest     `json:"route" validate:"omitnil"`
	SubjectRole           string            `json:"subjectRole" validate:"oneof=scene portrait-background existing-subject"`
	Query                 string            `json:"query" validate:"max=1000"`
	Radius                int               `json:"radius" validate:"gte=100,lte=20000"`
	Limit                 int               `json:"limit" validate:"gte=1,lte=5" shapes:"deprecated"`
	PhotoStyles           []string          `json:"photoStyles" validate:"max=8,dive,oneof=nature urban vintage iconic artistic waterside minimal adventure"`
	Preferences           string            `json:"preferences" validate:"max=500"`
	Categories            []string          `json:"categories" validate:"omitnil,dive,oneof=viewpoint park attraction museum artwork historic nature recreation cafe restaurant bar shop"`
	PoiQueries            []string          `json:"poiQueries" validate:"max=4,dive,min=1,max=200"`
	GeographicKinds       []string          `json:"geographicKinds" validate:"max=6,dive,oneof=lake sea river peak forest waterside"`
	OSMFeatures           []OSMFeatureQuery `json:"osmFeatures" validate:"max=6"`
	GeographicCombination string            `json:"geographicCombination" validate:"oneof=all any"`
	FeatureCombination    string            `json:"featureCombination" validate:"oneof=all any"`
	ScoringIntent         string            `json:"scoringIntent" validate:"max=1000"`
}

// SetDefaults sets the documented defaults.
func (r *IntentRequest) SetDefaults() {
	*r = IntentRequest{SubjectRole: "scene", Radius: 1000, Limit: 3, PhotoStyles: []string{},
		PoiQueries: []string{}, GeographicKinds: []string{}, OSMFeatures: []OSMFeatureQuery{},
		GeographicCombination: "all", FeatureCombination: "all"}
}

// SearchParameters are the resolved parameters of a search (no extra
// properties). PhotoStyles and Categories are free strings here, as the
// document gives them no enumeration.
type SearchParameters struct {
	Lat                   float64           `json:"lat" validate:"required,gte=-85,lte=85"`
	Lon                   float64           `json:"lon" validate:"required,gte=-180,lte=180"`
	Radius                int               `json:"radius" validate:"gte=100,lte=20000"`
	SearchProgram         *SearchProgram    `json:"searchProgram" validate:"omitnil"`
	SearchBranches        []SearchBranch    `json:"searchBranches" validate:"max=6"`
	PoiQueries            []string          `json:"poiQueries" validate:"max=4"`
	GeographicKinds       []string          `json:"geographicKinds" validate:"max=6,dive,oneof=lake sea river peak forest waterside"`
	GeographicCombination string            `json:"geographicCombination" validate:"oneof=all any"`
	FeatureCombination    string            `json:"featureCombination" validate:"oneof=all any"`
	OSMFeatures           []OSMFeatureQuery `json:"osmFeatures" validate:"max=6"`
	PhotoStyles           []string          `json:"photoStyles" validate:"omitnil,max=8"`
	Categories            []string          `json:"categories" validate:"omitnil,max=8"`
	Requirements          []Requirement     `json:"requirements" validate:"max=16"`
	SubjectRole           string            `json:"subjectRole" validate:"oneof=scene portrait-background existing-subject"`
	ScoringIntent         string            `json:"scoringIntent" validate:"max=1000"`
	Preferences           string            `json:"preferences" validate:"max=500"`
}

// SetDefaults sets the documented defaults.
func (p *SearchParameters) SetDefaults() {
	*p = SearchParameters{Radius: 5000, SearchBranches: []SearchBranch{}, PoiQueries: []string{},
		GeographicKinds: []string{}, GeographicCombination: "all", FeatureCombination: "all",
		OSMFeatures: []OSMFeatureQuery{}, Requirements: []Requirement{}, SubjectRole: "scene"}
}
